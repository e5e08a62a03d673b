// Loads SQLite at run time and forwards Courier's calls to it (see CourierSQLite.h).
//
// Why this is safe: every function pointer comes from dlsym on the system's SQLite and has the
// prototype of the real declaration (checked against <sqlite3.h> by Scripts/check-sqlite.sh);
// the table of pointers is written once, under a mutex, before courier_sqlite_load first returns
// 0, and never again, and the Swift side calls nothing else before that (SQLiteLibrary checks
// first); the binding functions pass SQLITE_TRANSIENT, so SQLite copies the caller's bytes
// before returning and keeps no pointer into them.
#include "CourierSQLite.h"
#include "CourierSQLiteABI.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#if defined(__APPLE__)
#define COURIER_SQLITE_DEFAULT_LIBRARY "/usr/lib/libsqlite3.dylib"
#else
#define COURIER_SQLITE_DEFAULT_LIBRARY "libsqlite3.so.0"
#endif

struct courier_sqlite_functions {
    courier_libversion_f libversion;
    courier_libversion_number_f libversion_number;
    courier_threadsafe_f threadsafe;
    courier_open_v2_f open_v2;
    courier_close_v2_f close_v2;
    courier_extended_result_codes_f extended_result_codes;
    courier_busy_timeout_f busy_timeout;
    courier_exec_f exec;
    courier_free_f free;
    courier_errmsg_f errmsg;
    courier_errstr_f errstr;
    courier_extended_errcode_f extended_errcode;
    courier_changes_f changes;
    courier_last_insert_rowid_f last_insert_rowid;
    courier_prepare_v2_f prepare_v2;
    courier_step_f step;
    courier_reset_f reset;
    courier_clear_bindings_f clear_bindings;
    courier_finalize_f finalize;
    courier_bind_int64_f bind_int64;
    courier_bind_double_f bind_double;
    courier_bind_null_f bind_null;
    courier_bind_text_f bind_text;
    courier_bind_blob_f bind_blob;
    courier_column_count_f column_count;
    courier_column_type_f column_type;
    courier_column_int64_f column_int64;
    courier_column_double_f column_double;
    courier_column_text_f column_text;
    courier_column_blob_f column_blob;
    courier_column_bytes_f column_bytes;
};

static struct courier_sqlite_functions sqlite;
static int loaded;
static pthread_mutex_t load_mutex = PTHREAD_MUTEX_INITIALIZER;

static int look_up(void *library, const char *library_name, const char *name, void **slot, char *reason, size_t capacity) {
    *slot = dlsym(library, name);
    if (*slot == NULL) {
        snprintf(reason, capacity, "%s has no %s (SQLite 3.7.15 or later is needed)", library_name, name);
        return -1;
    }
    return 0;
}

// Fills `functions` from the library `name`; on failure writes why and returns -1.
static int load(const char *name, struct courier_sqlite_functions *functions, char *reason, size_t capacity) {
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *error = dlerror();
        snprintf(reason, capacity, "cannot open %s: %s", name, error ? error : "unknown error");
        return -1;
    }
#define LOOK_UP(field, symbol) \
    if (look_up(library, name, symbol, (void **)&functions->field, reason, capacity) != 0) { dlclose(library); return -1; }
    LOOK_UP(libversion, "sqlite3_libversion")
    LOOK_UP(libversion_number, "sqlite3_libversion_number")
    LOOK_UP(threadsafe, "sqlite3_threadsafe")
    LOOK_UP(open_v2, "sqlite3_open_v2")
    LOOK_UP(close_v2, "sqlite3_close_v2")
    LOOK_UP(extended_result_codes, "sqlite3_extended_result_codes")
    LOOK_UP(busy_timeout, "sqlite3_busy_timeout")
    LOOK_UP(exec, "sqlite3_exec")
    LOOK_UP(free, "sqlite3_free")
    LOOK_UP(errmsg, "sqlite3_errmsg")
    LOOK_UP(errstr, "sqlite3_errstr")
    LOOK_UP(extended_errcode, "sqlite3_extended_errcode")
    LOOK_UP(changes, "sqlite3_changes")
    LOOK_UP(last_insert_rowid, "sqlite3_last_insert_rowid")
    LOOK_UP(prepare_v2, "sqlite3_prepare_v2")
    LOOK_UP(step, "sqlite3_step")
    LOOK_UP(reset, "sqlite3_reset")
    LOOK_UP(clear_bindings, "sqlite3_clear_bindings")
    LOOK_UP(finalize, "sqlite3_finalize")
    LOOK_UP(bind_int64, "sqlite3_bind_int64")
    LOOK_UP(bind_double, "sqlite3_bind_double")
    LOOK_UP(bind_null, "sqlite3_bind_null")
    LOOK_UP(bind_text, "sqlite3_bind_text")
    LOOK_UP(bind_blob, "sqlite3_bind_blob")
    LOOK_UP(column_count, "sqlite3_column_count")
    LOOK_UP(column_type, "sqlite3_column_type")
    LOOK_UP(column_int64, "sqlite3_column_int64")
    LOOK_UP(column_double, "sqlite3_column_double")
    LOOK_UP(column_text, "sqlite3_column_text")
    LOOK_UP(column_blob, "sqlite3_column_blob")
    LOOK_UP(column_bytes, "sqlite3_column_bytes")
#undef LOOK_UP
    if (functions->libversion_number() < 3007015) {
        snprintf(reason, capacity, "SQLite %s (%s) is older than 3.7.15, which the journal needs",
                 functions->libversion(), name);
        dlclose(library);
        return -1;
    }
    if (functions->threadsafe() == 0) {
        snprintf(reason, capacity, "%s was built without thread safety (SQLITE_THREADSAFE=0)", name);
        dlclose(library);
        return -1;
    }
    return 0;
}

int courier_sqlite_load(const char *name, char *reason, size_t capacity) {
    char ignored[1];
    if (reason == NULL || capacity == 0) { reason = ignored; capacity = sizeof ignored; }
    pthread_mutex_lock(&load_mutex);
    int result = 0;
    // A library named explicitly is always tried (and reported), but published only when none was.
    if (!loaded || name != NULL) {
        struct courier_sqlite_functions functions;
        result = load(name ? name : COURIER_SQLITE_DEFAULT_LIBRARY, &functions, reason, capacity);
        if (result == 0 && !loaded) {
            sqlite = functions;
            loaded = 1;
        }
    }
    pthread_mutex_unlock(&load_mutex);
    return result;
}

const char *courier_sqlite_libversion(void) { return sqlite.libversion(); }
int courier_sqlite_libversion_number(void) { return sqlite.libversion_number(); }

int courier_sqlite_open_v2(const char *filename, CourierSQLiteDatabase **database, int flags, const char *vfs) {
    return sqlite.open_v2(filename, database, flags, vfs);
}
int courier_sqlite_close_v2(CourierSQLiteDatabase *database) { return sqlite.close_v2(database); }
int courier_sqlite_extended_result_codes(CourierSQLiteDatabase *database, int onoff) {
    return sqlite.extended_result_codes(database, onoff);
}
int courier_sqlite_busy_timeout(CourierSQLiteDatabase *database, int milliseconds) {
    return sqlite.busy_timeout(database, milliseconds);
}
int courier_sqlite_exec(CourierSQLiteDatabase *database, const char *sql) {
    char *message = NULL;
    int result = sqlite.exec(database, sql, NULL, NULL, &message);
    // The same message stays readable through sqlite3_errmsg.
    if (message != NULL) sqlite.free(message);
    return result;
}
const char *courier_sqlite_errmsg(CourierSQLiteDatabase *database) { return sqlite.errmsg(database); }
const char *courier_sqlite_errstr(int code) { return sqlite.errstr ? sqlite.errstr(code) : "SQLite is not loaded"; }
int courier_sqlite_extended_errcode(CourierSQLiteDatabase *database) { return sqlite.extended_errcode(database); }
int courier_sqlite_changes(CourierSQLiteDatabase *database) { return sqlite.changes(database); }
int64_t courier_sqlite_last_insert_rowid(CourierSQLiteDatabase *database) { return sqlite.last_insert_rowid(database); }

int courier_sqlite_prepare_v2(CourierSQLiteDatabase *database, const char *sql, int length,
                              CourierSQLiteStatement **statement, const char **tail) {
    return sqlite.prepare_v2(database, sql, length, statement, tail);
}
int courier_sqlite_step(CourierSQLiteStatement *statement) { return sqlite.step(statement); }
int courier_sqlite_reset(CourierSQLiteStatement *statement) { return sqlite.reset(statement); }
int courier_sqlite_clear_bindings(CourierSQLiteStatement *statement) { return sqlite.clear_bindings(statement); }
int courier_sqlite_finalize(CourierSQLiteStatement *statement) { return sqlite.finalize(statement); }

int courier_sqlite_bind_int64(CourierSQLiteStatement *statement, int index, int64_t value) {
    return sqlite.bind_int64(statement, index, value);
}
int courier_sqlite_bind_double(CourierSQLiteStatement *statement, int index, double value) {
    return sqlite.bind_double(statement, index, value);
}
int courier_sqlite_bind_null(CourierSQLiteStatement *statement, int index) { return sqlite.bind_null(statement, index); }
// A NULL pointer would bind SQL NULL; an empty value is bound from a static empty string instead.
int courier_sqlite_bind_text(CourierSQLiteStatement *statement, int index, const char *text, int length) {
    return sqlite.bind_text(statement, index, (text != NULL && length > 0) ? text : "", length > 0 ? length : 0,
                            COURIER_SQLITE_TRANSIENT);
}
int courier_sqlite_bind_blob(CourierSQLiteStatement *statement, int index, const void *bytes, int length) {
    return sqlite.bind_blob(statement, index, (bytes != NULL && length > 0) ? bytes : "", length > 0 ? length : 0,
                            COURIER_SQLITE_TRANSIENT);
}

int courier_sqlite_column_count(CourierSQLiteStatement *statement) { return sqlite.column_count(statement); }
int courier_sqlite_column_type(CourierSQLiteStatement *statement, int column) { return sqlite.column_type(statement, column); }
int64_t courier_sqlite_column_int64(CourierSQLiteStatement *statement, int column) {
    return sqlite.column_int64(statement, column);
}
double courier_sqlite_column_double(CourierSQLiteStatement *statement, int column) {
    return sqlite.column_double(statement, column);
}
const unsigned char *courier_sqlite_column_text(CourierSQLiteStatement *statement, int column) {
    return sqlite.column_text(statement, column);
}
const void *courier_sqlite_column_blob(CourierSQLiteStatement *statement, int column) {
    return sqlite.column_blob(statement, column);
}
int courier_sqlite_column_bytes(CourierSQLiteStatement *statement, int column) {
    return sqlite.column_bytes(statement, column);
}
