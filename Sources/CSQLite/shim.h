#ifndef SCROLLBACK_CSQLITE_SHIM_H
#define SCROLLBACK_CSQLITE_SHIM_H

#include <sqlite3.h>

/* sqlite3_db_config is variadic and does not import into Swift. */
static inline int scrollback_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/*
 * sqlite3_config is variadic too. SQLite's count of the memory it holds, off: every malloc
 * and free took a mutex for it (2% of an import), and nothing here reads the count. Only
 * before SQLite's first use (later it is SQLITE_MISUSE and changes nothing).
 */
static inline int scrollback_sqlite3_config_no_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/* Extended result codes built with | and << do not import into Swift. */
static const int scrollback_sqlite_constraint_trigger = SQLITE_CONSTRAINT_TRIGGER;

#endif
