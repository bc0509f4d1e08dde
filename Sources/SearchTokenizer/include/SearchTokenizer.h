#ifndef SCROLLBACK_SEARCH_TOKENIZER_H
#define SCROLLBACK_SEARCH_TOKENIZER_H

#include <sqlite3.h>

/*
 * Registers the FTS5 tokenizer "scrollback" on one connection, for tables made with
 * tokenize = 'scrollback'.
 *
 * Text in scripts written with spaces goes to FTS5's own unicode61 tokenizer
 * (remove_diacritics 2). Runs of Han, Kana, Hangul, Thai, Lao, Khmer and Myanmar are
 * indexed as overlapping bigrams with every character colocated as a unigram, so a phrase
 * query of any length, one character upwards, finds its substring. See SearchTokenizer.c.
 *
 * Returns SQLITE_OK, or an SQLite error code (FTS5 missing, out of memory).
 */
int scrollback_register_tokenizer(sqlite3 *db);

#endif
