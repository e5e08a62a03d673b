// The prototypes of the SQLite functions CourierSQLite.c looks up. The type macros default to
// Courier's own opaque types; Scripts/check-sqlite.sh includes this header with them set to
// SQLite's real types and assigns each real function to its pointer type here, so a prototype
// that differs from <sqlite3.h> fails the check.
#ifndef COURIER_SQLITE_ABI_H
#define COURIER_SQLITE_ABI_H

#include "include/CourierSQLite.h"

#ifndef COURIER_ABI_DB
#define COURIER_ABI_DB CourierSQLiteDatabase
#define COURIER_ABI_STMT CourierSQLiteStatement
#define COURIER_ABI_INT64 int64_t
#define COURIER_ABI_CALLBACK courier_sqlite_callback_f
#endif

/// sqlite3_exec's row callback (Courier passes none).
typedef int (*courier_sqlite_callback_f)(void *, int, char **, char **);
/// The destructor argument of the binding functions (sqlite3_destructor_type).
typedef void (*courier_sqlite_destructor_f)(void *);
/// SQLITE_TRANSIENT: "copy what I give you before returning".
#define COURIER_SQLITE_TRANSIENT ((courier_sqlite_destructor_f)-1)

typedef const char *(*courier_libversion_f)(void);
typedef int (*courier_libversion_number_f)(void);
typedef int (*courier_threadsafe_f)(void);
typedef int (*courier_open_v2_f)(const char *, COURIER_ABI_DB **, int, const char *);
typedef int (*courier_close_v2_f)(COURIER_ABI_DB *);
typedef int (*courier_extended_result_codes_f)(COURIER_ABI_DB *, int);
typedef int (*courier_busy_timeout_f)(COURIER_ABI_DB *, int);
typedef int (*courier_exec_f)(COURIER_ABI_DB *, const char *, COURIER_ABI_CALLBACK, void *, char **);
typedef void (*courier_free_f)(void *);
typedef const char *(*courier_errmsg_f)(COURIER_ABI_DB *);
typedef const char *(*courier_errstr_f)(int);
typedef int (*courier_extended_errcode_f)(COURIER_ABI_DB *);
typedef int (*courier_changes_f)(COURIER_ABI_DB *);
typedef COURIER_ABI_INT64 (*courier_last_insert_rowid_f)(COURIER_ABI_DB *);
typedef int (*courier_prepare_v2_f)(COURIER_ABI_DB *, const char *, int, COURIER_ABI_STMT **, const char **);
typedef int (*courier_step_f)(COURIER_ABI_STMT *);
typedef int (*courier_reset_f)(COURIER_ABI_STMT *);
typedef int (*courier_clear_bindings_f)(COURIER_ABI_STMT *);
typedef int (*courier_finalize_f)(COURIER_ABI_STMT *);
typedef int (*courier_bind_int64_f)(COURIER_ABI_STMT *, int, COURIER_ABI_INT64);
typedef int (*courier_bind_double_f)(COURIER_ABI_STMT *, int, double);
typedef int (*courier_bind_null_f)(COURIER_ABI_STMT *, int);
typedef int (*courier_bind_text_f)(COURIER_ABI_STMT *, int, const char *, int, courier_sqlite_destructor_f);
typedef int (*courier_bind_blob_f)(COURIER_ABI_STMT *, int, const void *, int, courier_sqlite_destructor_f);
typedef int (*courier_column_count_f)(COURIER_ABI_STMT *);
typedef int (*courier_column_type_f)(COURIER_ABI_STMT *, int);
typedef COURIER_ABI_INT64 (*courier_column_int64_f)(COURIER_ABI_STMT *, int);
typedef double (*courier_column_double_f)(COURIER_ABI_STMT *, int);
typedef const unsigned char *(*courier_column_text_f)(COURIER_ABI_STMT *, int);
typedef const void *(*courier_column_blob_f)(COURIER_ABI_STMT *, int);
typedef int (*courier_column_bytes_f)(COURIER_ABI_STMT *, int);

#endif
