#ifndef SCROLLBACK_CSQLITE_SHIM_H
#define SCROLLBACK_CSQLITE_SHIM_H

#include <sqlite3.h>

/* sqlite3_db_config is variadic and does not import into Swift. */
static inline int scrollback_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/* Extended result codes built with | and << do not import into Swift. */
static const int scrollback_sqlite_constraint_trigger = SQLITE_CONSTRAINT_TRIGGER;

#endif
