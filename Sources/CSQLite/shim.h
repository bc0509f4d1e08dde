#ifndef SCROLLBACK_CSQLITE_SHIM_H
#define SCROLLBACK_CSQLITE_SHIM_H

#include <sqlite3.h>

/* sqlite3_db_config is variadic and does not import into Swift. */
static inline int scrollback_sqlite3_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

#endif
