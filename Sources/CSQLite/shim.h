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

/*
 * Starts the disk on the dirty pages of a file's range without waiting for it
 * (sync_file_range with SYNC_FILE_RANGE_WRITE, through syscall: its declaration needs
 * _GNU_SOURCE): a file written for a long while and synced at its end waits for less then.
 */
#include <sys/syscall.h>
#include <unistd.h>
static inline int scrollback_start_writeback(int descriptor, long long offset, long long length) {
    return (int)syscall(SYS_sync_file_range, descriptor, offset, length, 2u);
}

/*
 * copy_file_range(2) from `*from_offset` of `from` (advanced by what was copied; the
 * descriptor's own position is left alone) to `to`'s position: the kernel copies, no bytes
 * pass through here. Through syscall for the same reason. Bytes copied, 0 at the end, -1
 * with errno.
 */
static inline long long scrollback_copy_file_range_at(int from, long long *from_offset, int to, long long length) {
    return (long long)syscall(SYS_copy_file_range, from, from_offset, to, (void *)0, (size_t)length, 0u);
}

/* Extended result codes built with | and << do not import into Swift. */
static const int scrollback_sqlite_constraint_trigger = SQLITE_CONSTRAINT_TRIGGER;

#endif
