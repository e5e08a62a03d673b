// Courier's own declarations for the few parts of SQLite the durable journal uses, so that
// building Courier needs no sqlite3.h: the system's SQLite is opened at run time (libsqlite3.so.0
// on Linux, which the Swift toolchain itself depends on; /usr/lib/libsqlite3.dylib on Apple
// platforms). Every constant below is checked against the real <sqlite3.h> by
// Scripts/check-sqlite.sh, which the test command runs.
//
// The functions are thin wrappers over SQLite's own (same arguments, same results) so that the
// Swift side never holds a function pointer; the binding ones always pass SQLITE_TRANSIENT, so
// SQLite copies what it is given before they return and no Swift buffer has to outlive the call.
#ifndef COURIER_SQLITE_H
#define COURIER_SQLITE_H

#include <stddef.h>
#include <stdint.h>

typedef struct CourierSQLiteDatabase CourierSQLiteDatabase;    // sqlite3
typedef struct CourierSQLiteStatement CourierSQLiteStatement;  // sqlite3_stmt

enum {
    // Result codes (primary)
    COURIER_SQLITE_OK = 0,
    COURIER_SQLITE_ERROR = 1,
    COURIER_SQLITE_INTERNAL = 2,
    COURIER_SQLITE_PERM = 3,
    COURIER_SQLITE_ABORT = 4,
    COURIER_SQLITE_BUSY = 5,
    COURIER_SQLITE_LOCKED = 6,
    COURIER_SQLITE_NOMEM = 7,
    COURIER_SQLITE_READONLY = 8,
    COURIER_SQLITE_INTERRUPT = 9,
    COURIER_SQLITE_IOERR = 10,
    COURIER_SQLITE_CORRUPT = 11,
    COURIER_SQLITE_NOTFOUND = 12,
    COURIER_SQLITE_FULL = 13,
    COURIER_SQLITE_CANTOPEN = 14,
    COURIER_SQLITE_PROTOCOL = 15,
    COURIER_SQLITE_SCHEMA = 17,
    COURIER_SQLITE_TOOBIG = 18,
    COURIER_SQLITE_CONSTRAINT = 19,
    COURIER_SQLITE_MISMATCH = 20,
    COURIER_SQLITE_MISUSE = 21,
    COURIER_SQLITE_NOLFS = 22,
    COURIER_SQLITE_AUTH = 23,
    COURIER_SQLITE_RANGE = 25,
    COURIER_SQLITE_NOTADB = 26,
    COURIER_SQLITE_ROW = 100,
    COURIER_SQLITE_DONE = 101,

    // Flags of sqlite3_open_v2
    COURIER_SQLITE_OPEN_READONLY = 0x00000001,
    COURIER_SQLITE_OPEN_READWRITE = 0x00000002,
    COURIER_SQLITE_OPEN_CREATE = 0x00000004,
    COURIER_SQLITE_OPEN_NOMUTEX = 0x00008000,
    COURIER_SQLITE_OPEN_FULLMUTEX = 0x00010000,
    COURIER_SQLITE_OPEN_PRIVATECACHE = 0x00040000,

    // Column types (sqlite3_column_type)
    COURIER_SQLITE_INTEGER = 1,
    COURIER_SQLITE_FLOAT = 2,
    COURIER_SQLITE3_TEXT = 3,
    COURIER_SQLITE_BLOB = 4,
    COURIER_SQLITE_NULL = 5,
};

/// Opens the system's SQLite (`name`, or the platform's default when NULL) and looks up every
/// function below. Returns 0 when SQLite is usable (3.7.15 or later, built thread-safe);
/// otherwise writes why into `reason` and returns -1. Only the first successful load is used; a
/// later call with a NULL name returns 0 at once, one with a name tries that library (to report
/// whether it can be loaded) and keeps the first. Safe to call from any thread.
int courier_sqlite_load(const char *name, char *reason, size_t capacity);

/// SQLite's version, as "3.40.1"; only after a successful load.
const char *courier_sqlite_libversion(void);
/// SQLite's version as a number (3040001 for 3.40.1); only after a successful load.
int courier_sqlite_libversion_number(void);

int courier_sqlite_open_v2(const char *filename, CourierSQLiteDatabase **database, int flags, const char *vfs);
int courier_sqlite_close_v2(CourierSQLiteDatabase *database);
int courier_sqlite_extended_result_codes(CourierSQLiteDatabase *database, int onoff);
int courier_sqlite_busy_timeout(CourierSQLiteDatabase *database, int milliseconds);
/// Runs SQL without results (no callback); SQLite's error message, if any, is freed here.
int courier_sqlite_exec(CourierSQLiteDatabase *database, const char *sql);
const char *courier_sqlite_errmsg(CourierSQLiteDatabase *database);
const char *courier_sqlite_errstr(int code);
int courier_sqlite_extended_errcode(CourierSQLiteDatabase *database);
int courier_sqlite_changes(CourierSQLiteDatabase *database);
int64_t courier_sqlite_last_insert_rowid(CourierSQLiteDatabase *database);

int courier_sqlite_prepare_v2(CourierSQLiteDatabase *database, const char *sql, int length,
                              CourierSQLiteStatement **statement, const char **tail);
int courier_sqlite_step(CourierSQLiteStatement *statement);
int courier_sqlite_reset(CourierSQLiteStatement *statement);
int courier_sqlite_clear_bindings(CourierSQLiteStatement *statement);
int courier_sqlite_finalize(CourierSQLiteStatement *statement);

int courier_sqlite_bind_int64(CourierSQLiteStatement *statement, int index, int64_t value);
int courier_sqlite_bind_double(CourierSQLiteStatement *statement, int index, double value);
int courier_sqlite_bind_null(CourierSQLiteStatement *statement, int index);
/// Binds `length` bytes of UTF-8 (not NUL-terminated); SQLite copies them (SQLITE_TRANSIENT).
int courier_sqlite_bind_text(CourierSQLiteStatement *statement, int index, const char *text, int length);
/// Binds `length` bytes (an empty blob, not NULL, when `length` is 0, whatever `bytes` is);
/// SQLite copies them (SQLITE_TRANSIENT).
int courier_sqlite_bind_blob(CourierSQLiteStatement *statement, int index, const void *bytes, int length);

int courier_sqlite_column_count(CourierSQLiteStatement *statement);
int courier_sqlite_column_type(CourierSQLiteStatement *statement, int column);
int64_t courier_sqlite_column_int64(CourierSQLiteStatement *statement, int column);
double courier_sqlite_column_double(CourierSQLiteStatement *statement, int column);
/// Valid until the statement steps, resets or is finalized; `courier_sqlite_column_bytes`
/// (called after this) tells its length.
const unsigned char *courier_sqlite_column_text(CourierSQLiteStatement *statement, int column);
const void *courier_sqlite_column_blob(CourierSQLiteStatement *statement, int column);
int courier_sqlite_column_bytes(CourierSQLiteStatement *statement, int column);

#endif
