#!/usr/bin/env bash
# Checks Courier's own SQLite declarations (Sources/CourierSQLite/include/CourierSQLite.h) against
# the real <sqlite3.h>: every constant's value, the SQLITE_TRANSIENT sentinel, and the prototype
# of every function it looks up (Sources/CourierSQLite/CourierSQLiteABI.h, compiled here with
# SQLite's real types). Building Courier needs no SQLite headers; this check does, so it installs
# Debian's libsqlite3-dev when they are missing (as root). The test command runs it; a mismatch
# fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

source Scripts/declarations.sh
header_dir=$(find_header sqlite3.h libsqlite3-dev)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
header=Sources/CourierSQLite/include/CourierSQLite.h
functions=(libversion libversion_number threadsafe open_v2 close_v2 extended_result_codes busy_timeout exec free
           errmsg errstr extended_errcode changes last_insert_rowid prepare_v2 step reset clear_bindings finalize
           bind_int64 bind_double bind_null bind_text bind_blob column_count column_type column_int64
           column_double column_text column_blob column_bytes)
{
    echo '#include <stddef.h>'
    echo '#include <stdint.h>'
    echo '#include <sqlite3.h>'
    echo "#include \"$PWD/$header\""
    # Every COURIER_X constant must equal X.
    constant_checks "$header"
    cat <<'C'
/* CourierSQLiteABI.h with SQLite's real types: every real function must fit its pointer type. */
#define COURIER_ABI_DB sqlite3
#define COURIER_ABI_STMT sqlite3_stmt
#define COURIER_ABI_INT64 sqlite3_int64
#define COURIER_ABI_CALLBACK int (*)(void *, int, char **, char **)
C
    echo "#include \"$PWD/Sources/CourierSQLite/CourierSQLiteABI.h\""
    for function in "${functions[@]}"; do
        echo "courier_${function}_f check_$function = sqlite3_$function;"
    done
    cat <<'C'
/* Courier passes int64_t where SQLite takes sqlite3_int64 (long long): the same 64-bit integer. */
_Static_assert(sizeof(sqlite3_int64) == sizeof(int64_t) && (sqlite3_int64)-1 < 0, "sqlite3_int64 is not a signed 64-bit integer");
/* The destructor type and the SQLITE_TRANSIENT sentinel CourierSQLite.c passes when binding. */
sqlite3_destructor_type check_destructor = (courier_sqlite_destructor_f)0;
_Static_assert((intptr_t)COURIER_SQLITE_TRANSIENT == (intptr_t)SQLITE_TRANSIENT, "SQLITE_TRANSIENT differs");
int main(void) { return 0; }
C
} >"$work/check.c"

compile_check SQLite "$work/check.c" "$header_dir" -Wno-gnu-folding-constant
count=$(grep -c '_Static_assert' "$work/check.c")
echo "==> Courier's SQLite declarations match $header_dir/sqlite3.h ($count static checks and ${#functions[@]} prototypes)"
