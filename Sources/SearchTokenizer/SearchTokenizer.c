/*
 * The FTS5 tokenizer "scrollback": unicode61 for text written with spaces, overlapping
 * bigrams (plus colocated unigrams) for the scripts written without them.
 *
 * The text is split into maximal runs of "CJK-class" code points (the table below) and runs
 * of everything else. A run of everything else goes to FTS5's unicode61 tokenizer (created
 * with remove_diacritics 2, then any arguments of the table's tokenize option), whose tokens
 * pass through unchanged but for their byte offsets, which are made relative to the whole
 * text. A CJK run of n code points c1..cn becomes:
 *
 *   document (FTS5_TOKENIZE_DOCUMENT, FTS5_TOKENIZE_AUX):
 *     n == 1: c1 at one position.
 *     n >= 2: n-1 positions; at position i (0-based) the bigram c(i+1)c(i+2), and colocated
 *             with it the unigram c(i+1); the last unigram cn is colocated at position n-2.
 *   query (FTS5_TOKENIZE_QUERY, with or without FTS5_TOKENIZE_PREFIX):
 *     n == 1: c1; n >= 2: the n-1 bigrams, one per position.
 *
 * So every unigram and bigram of a document is indexed, and a phrase query of mixed text
 * ("東京tower", "会議室", "東") lines up with the document's positions: a query run that
 * ends a document run's first character early ("京" in "東京tower") finds that character
 * colocated with the bigram that starts at it or, for the run's last character, with the
 * run's last bigram.
 *
 * Token text and offsets always point into the caller's text: a bigram is the bytes of two
 * adjacent, valid code points. Bytes that are not valid UTF-8 are one non-CJK code point
 * each, and go to unicode61 with their neighbours; nothing here reads outside [0, nText).
 *
 * Changing the table or the token layout changes what an existing index holds: such a
 * change needs the FTS tables rebuilt (a schema migration), never a silent swap.
 */
#include "SearchTokenizer.h"

#include <string.h>

/* A closed range of code points. */
typedef struct CodePointRange {
    unsigned int first;
    unsigned int last;
} CodePointRange;

/*
 * The CJK-class code points, in ascending order (binary searched). Whole Unicode blocks,
 * unassigned code points included, except for the digits, punctuation and currency signs
 * inside them, which are left to unicode61 (digits become number tokens, the rest
 * separators), as the comments on each line say.
 */
static const CodePointRange cjkClass[] = {
    {0x0E00, 0x0E3E},   /* Thai, without U+0E3F ฿ (currency) */
    {0x0E40, 0x0E4E},   /* Thai, without U+0E4F ๏ (punctuation), U+0E50-0E59 (digits), */
    {0x0E5C, 0x0E7F},   /*   U+0E5A-0E5B ๚ ๛ (punctuation) */
    {0x0E80, 0x0ECF},   /* Lao, without U+0ED0-0ED9 (digits) */
    {0x0EDA, 0x0EFF},
    {0x1000, 0x103F},   /* Myanmar, without U+1040-1049 (digits), U+104A-104F (punctuation */
    {0x1050, 0x108F},   /*   and symbols), U+1090-1099 (Shan digits) */
    {0x109A, 0x109F},
    {0x1100, 0x11FF},   /* Hangul Jamo */
    {0x1780, 0x17D3},   /* Khmer, without U+17D4-17D6, U+17D8-17DA (punctuation), */
    {0x17D7, 0x17D7},   /*   U+17DB ៛ (currency), U+17E0-17E9 (digits), */
    {0x17DC, 0x17DF},   /*   U+17F0-17F9 (numeric symbols for divination lore) */
    {0x17EA, 0x17EF},
    {0x17FA, 0x17FF},
    {0x19E0, 0x19FF},   /* Khmer Symbols (lunar dates) */
    {0x3005, 0x3005},   /* 々 ideographic iteration mark */
    {0x3007, 0x3007},   /* 〇 ideographic number zero */
    {0x3040, 0x309F},   /* Hiragana */
    {0x30A1, 0x30FA},   /* Katakana, without U+30A0 ゠ and U+30FB ・ (punctuation); */
    {0x30FC, 0x30FF},   /*   with U+30FC ー (prolonged sound mark) */
    {0x3130, 0x318F},   /* Hangul Compatibility Jamo */
    {0x31F0, 0x31FF},   /* Katakana Phonetic Extensions */
    {0x3400, 0x4DBF},   /* CJK Unified Ideographs Extension A */
    {0x4E00, 0x9FFF},   /* CJK Unified Ideographs */
    {0xA960, 0xA97F},   /* Hangul Jamo Extended-A */
    {0xA9E0, 0xA9EF},   /* Myanmar Extended-B, without U+A9F0-A9F9 (Tai Laing digits) */
    {0xA9FA, 0xA9FF},
    {0xAA60, 0xAA7F},   /* Myanmar Extended-A */
    {0xAC00, 0xD7AF},   /* Hangul Syllables */
    {0xD7B0, 0xD7FF},   /* Hangul Jamo Extended-B */
    {0xF900, 0xFAFF},   /* CJK Compatibility Ideographs */
    {0xFF66, 0xFF9F},   /* Halfwidth Katakana, with U+FF70 ｰ and the sound marks */
    {0x20000, 0x2A6DF}, /* CJK Unified Ideographs Extension B */
    {0x2A700, 0x2EE5F}, /* Extensions C, D, E, F and I */
    {0x2F800, 0x2FA1F}, /* CJK Compatibility Ideographs Supplement */
    {0x30000, 0x323AF}, /* Extensions G and H */
};

static int isCJKClass(unsigned int codePoint) {
    if (codePoint < 0x0E00) return 0;
    int low = 0;
    int high = (int)(sizeof cjkClass / sizeof cjkClass[0]) - 1;
    while (low <= high) {
        int middle = low + (high - low) / 2;
        if (codePoint < cjkClass[middle].first) {
            high = middle - 1;
        } else if (codePoint > cjkClass[middle].last) {
            low = middle + 1;
        } else {
            return 1;
        }
    }
    return 0;
}

/*
 * The code point that starts at text[at] (at < length) and its length in bytes. Anything
 * that is not well-formed UTF-8 (a stray continuation byte, a truncated sequence, an
 * overlong form, a surrogate, beyond U+10FFFF) is one byte decoding as U+FFFD, which is not
 * CJK-class.
 */
static int decodeUTF8(const unsigned char *text, int length, int at, unsigned int *codePoint) {
    unsigned int lead = text[at];
    int count;
    unsigned int value;
    unsigned int minimum;
    *codePoint = 0xFFFD;
    if (lead < 0x80) {
        *codePoint = lead;
        return 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
        count = 2; value = lead & 0x1F; minimum = 0x80;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        count = 3; value = lead & 0x0F; minimum = 0x800;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        count = 4; value = lead & 0x07; minimum = 0x10000;
    } else {
        return 1;
    }
    if (count > length - at) return 1;
    for (int k = 1; k < count; k++) {
        unsigned int byte = text[at + k];
        if ((byte & 0xC0) != 0x80) return 1;
        value = (value << 6) | (byte & 0x3F);
    }
    if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return 1;
    *codePoint = value;
    return count;
}

typedef int (*TokenCallback)(void *context, int flags, const char *token, int length, int start, int end);

/* One "scrollback" tokenizer: an instance of unicode61 and its methods. */
typedef struct ScrollbackTokenizer {
    fts5_tokenizer wordMethods;
    Fts5Tokenizer *words;
} ScrollbackTokenizer;

/* Passes unicode61's tokens of a slice on, with offsets into the whole text. */
typedef struct SliceContext {
    void *context;
    TokenCallback emit;
    int offset;
} SliceContext;

static int emitFromSlice(void *context, int flags, const char *token, int length, int start, int end) {
    SliceContext *slice = (SliceContext *)context;
    return slice->emit(slice->context, flags, token, length, start + slice->offset, end + slice->offset);
}

static int tokenizeWords(ScrollbackTokenizer *tokenizer, void *context, int flags, const char *text,
                         int start, int end, TokenCallback emit) {
    if (start >= end) return SQLITE_OK;
    SliceContext slice = {context, emit, start};
    return tokenizer->wordMethods.xTokenize(tokenizer->words, &slice, flags, text + start, end - start, emitFromSlice);
}

/*
 * Emits the CJK run that starts at text[start] (a CJK-class code point of `firstLength`
 * bytes) and sets *runEnd to the offset just after it.
 */
static int tokenizeRun(const char *text, int length, int start, int firstLength, int isQuery, void *context,
                       TokenCallback emit, int *runEnd) {
    const unsigned char *bytes = (const unsigned char *)text;
    int current = start;              /* the code point c(i+1) */
    int currentEnd = start + firstLength;
    int emitted = 0;
    for (;;) {
        unsigned int codePoint = 0;
        int nextLength = currentEnd < length ? decodeUTF8(bytes, length, currentEnd, &codePoint) : 0;
        if (nextLength == 0 || !isCJKClass(codePoint)) {
            /* c(i+1) is the run's last code point: alone, or colocated with the last bigram. */
            *runEnd = currentEnd;
            if (emitted && isQuery) return SQLITE_OK;
            return emit(context, emitted ? FTS5_TOKEN_COLOCATED : 0, text + current, currentEnd - current, current,
                        currentEnd);
        }
        int nextEnd = currentEnd + nextLength;
        int rc = emit(context, 0, text + current, nextEnd - current, current, nextEnd);
        if (rc == SQLITE_OK && !isQuery) {
            rc = emit(context, FTS5_TOKEN_COLOCATED, text + current, currentEnd - current, current, currentEnd);
        }
        if (rc != SQLITE_OK) return rc;
        emitted = 1;
        current = currentEnd;
        currentEnd = nextEnd;
    }
}

static int scrollbackTokenize(Fts5Tokenizer *instance, void *context, int flags, const char *text, int length,
                              TokenCallback emit) {
    ScrollbackTokenizer *tokenizer = (ScrollbackTokenizer *)instance;
    if (text == NULL || length <= 0) return SQLITE_OK;
    const unsigned char *bytes = (const unsigned char *)text;
    int isQuery = (flags & FTS5_TOKENIZE_QUERY) != 0;
    int wordsStart = 0;
    int at = 0;
    while (at < length) {
        if (bytes[at] < 0x80) {
            at++;
            continue;
        }
        unsigned int codePoint;
        int codePointLength = decodeUTF8(bytes, length, at, &codePoint);
        if (!isCJKClass(codePoint)) {
            at += codePointLength;
            continue;
        }
        int rc = tokenizeWords(tokenizer, context, flags, text, wordsStart, at, emit);
        if (rc == SQLITE_OK) rc = tokenizeRun(text, length, at, codePointLength, isQuery, context, emit, &at);
        if (rc != SQLITE_OK) return rc;
        wordsStart = at;
    }
    if (wordsStart == 0) {
        /* No CJK-class text at all (most text): unicode61 alone, with no offsets to adjust. */
        return tokenizer->wordMethods.xTokenize(tokenizer->words, context, flags, text, length, emit);
    }
    return tokenizeWords(tokenizer, context, flags, text, wordsStart, length, emit);
}

static void scrollbackDelete(Fts5Tokenizer *instance) {
    ScrollbackTokenizer *tokenizer = (ScrollbackTokenizer *)instance;
    if (tokenizer == NULL) return;
    if (tokenizer->words != NULL) tokenizer->wordMethods.xDelete(tokenizer->words);
    sqlite3_free(tokenizer);
}

/* The arguments of unicode61: remove_diacritics 2, then the table's own, if any. */
static int scrollbackCreate(void *apiPointer, const char **arguments, int argumentCount, Fts5Tokenizer **result) {
    fts5_api *api = (fts5_api *)apiPointer;
    *result = NULL;
    if (argumentCount < 0) return SQLITE_ERROR;
    ScrollbackTokenizer *tokenizer = sqlite3_malloc(sizeof *tokenizer);
    if (tokenizer == NULL) return SQLITE_NOMEM;
    memset(tokenizer, 0, sizeof *tokenizer);
    void *wordsContext = NULL;
    int rc = api->xFindTokenizer(api, "unicode61", &wordsContext, &tokenizer->wordMethods);
    const char **wordArguments = NULL;
    if (rc == SQLITE_OK) {
        wordArguments = sqlite3_malloc64(sizeof(const char *) * (2 + (sqlite3_uint64)argumentCount));
        if (wordArguments == NULL) rc = SQLITE_NOMEM;
    }
    if (rc == SQLITE_OK) {
        wordArguments[0] = "remove_diacritics";
        wordArguments[1] = "2";
        for (int k = 0; k < argumentCount; k++) wordArguments[2 + k] = arguments[k];
        rc = tokenizer->wordMethods.xCreate(wordsContext, wordArguments, 2 + argumentCount, &tokenizer->words);
    }
    sqlite3_free(wordArguments);
    if (rc != SQLITE_OK) {
        scrollbackDelete((Fts5Tokenizer *)tokenizer);
        return rc;
    }
    *result = (Fts5Tokenizer *)tokenizer;
    return SQLITE_OK;
}

int scrollback_register_tokenizer(sqlite3 *db) {
    fts5_api *api = NULL;
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, NULL);
    if (rc != SQLITE_OK) return rc;
    rc = sqlite3_bind_pointer(statement, 1, (void *)&api, "fts5_api_ptr", NULL);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(statement);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    int finalized = sqlite3_finalize(statement);
    if (rc == SQLITE_OK) rc = finalized;
    if (rc != SQLITE_OK) return rc;
    if (api == NULL || api->iVersion < 2) return SQLITE_ERROR;
    /* unicode61 is found again for each table; looking now fails early when it is missing. */
    fts5_tokenizer words;
    void *wordsContext = NULL;
    rc = api->xFindTokenizer(api, "unicode61", &wordsContext, &words);
    if (rc != SQLITE_OK) return rc;
    fts5_tokenizer methods = {scrollbackCreate, scrollbackDelete, scrollbackTokenize};
    return api->xCreateTokenizer(api, "scrollback", (void *)api, &methods, NULL);
}
