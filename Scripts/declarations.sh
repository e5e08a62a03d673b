# Shared by Scripts/check-curl.sh and Scripts/check-sqlite.sh, which check Courier's own C
# declarations of a library loaded at run time against the library's real header. Sourced.

# find_header FILE PACKAGE: prints the include folder that holds FILE (for example curl/curl.h),
# installing Debian's PACKAGE first when it is missing (as root); fails when it is still missing.
find_header() {
    local file=$1 package=$2 dir
    for attempt in 1 2; do
        for dir in /usr/include /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
            if [ -f "$dir/$file" ]; then echo "$dir"; return 0; fi
        done
        [ $attempt = 1 ] || break
        echo "==> Installing $package for the declaration check of $file" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq "$package" >/dev/null
    done
    echo "$file not found after installing $package" >&2
    return 1
}

# constant_checks HEADER: a C static assertion that each COURIER_X constant HEADER declares (one
# per line, as an enum member) equals the real X.
constant_checks() {
    grep -oE '^\s*COURIER_[A-Za-z0-9_]+' "$1" | tr -d ' ' | sort -u | while read -r name; do
        real=${name#COURIER_}
        echo "_Static_assert((long)$name == (long)$real, \"$name differs from $real\");"
    done
}

# compile_check WHAT SOURCE INCLUDE_DIR [FLAGS...]: compiles SOURCE (syntax only) with incompatible
# pointer types as errors; on failure prints why, as a mismatch of WHAT, and fails.
compile_check() {
    local what=$1 source=$2 include_dir=$3
    shift 3
    local cc=${CC:-$(command -v clang || command -v cc)}
    if ! "$cc" -std=c11 -Werror=incompatible-pointer-types -Werror=incompatible-function-pointer-types \
            "$@" -fsyntax-only -I"$include_dir" "$source" 2>"$source.errors"; then
        echo "Courier's $what declarations do not match the real header:" >&2
        cat "$source.errors" >&2
        return 1
    fi
}
