#!/usr/bin/env bash
# Fuzzes the parsers of what servers send (response heads, event streams, Link fields, the headers the cache
# reads) with libFuzzer (the toolchain's -sanitize=fuzzer, with AddressSanitizer), each for a
# bounded time. A crash or a broken invariant fails the run and leaves the input that caused it
# in .build/fuzz/<target>/
#
# Each target is one Fuzz/*.swift file compiled with the library files it exercises, so the build
# needs nothing beyond the toolchain. Seeds come from Fuzz/corpus/<target>/ and are copied, so runs
# never change the repository; Fuzz/<target>.dict, when there is one, names the format's tokens.
# Usage: Scripts/fuzz.sh [SECONDS per target, default 60] [TARGET…]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
shift || true

# target name, fuzz file, then the library files it needs
targets=(
    "response-head Fuzz/ResponseHeadFuzz.swift Sources/Courier/Transport/Curl/ResponseHeadParser.swift Sources/Courier/Response/HTTPFields.swift Sources/Courier/Support/MessageText.swift Sources/Courier/Support/HTTPSyntax.swift"
    "server-sent-events Fuzz/ServerSentEventsFuzz.swift Sources/Courier/Streaming/ServerSentEventParser.swift Sources/Courier/Streaming/ServerSentEvent.swift"
    "cache-control Fuzz/CacheControlFuzz.swift Sources/Courier/Cache/CacheControl.swift Sources/Courier/Support/HTTPSyntax.swift"
    "http-date Fuzz/HTTPDateFuzz.swift Sources/Courier/Cache/HTTPDate.swift"
    "vary Fuzz/VaryFuzz.swift Sources/Courier/Cache/Vary.swift Sources/Courier/Response/HTTPFields.swift Sources/Courier/Support/MessageText.swift Sources/Courier/Support/HTTPSyntax.swift"
    "web-link Fuzz/WebLinkFuzz.swift Sources/Courier/Response/WebLink.swift Sources/Courier/Response/ResponseHead.swift Sources/Courier/Response/HTTPFields.swift Sources/Courier/Support/Locked.swift Sources/Courier/Support/MessageText.swift Sources/Courier/Support/HTTPSyntax.swift"
)

status=0
for entry in "${targets[@]}"; do
    read -r name files <<<"$entry"
    if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
    work=.build/fuzz/$name
    mkdir -p "$work/corpus"
    cp -n Fuzz/corpus/"$name"/* "$work/corpus/" 2>/dev/null || true
    echo "==> Fuzzing $name for $seconds s"
    # shellcheck disable=SC2086
    swiftc -O -sanitize=fuzzer,address -use-ld=lld -parse-as-library $files -o "$work/fuzzer"
    dictionary=()
    [ -f "Fuzz/$name.dict" ] && dictionary=(-dict="$PWD/Fuzz/$name.dict")
    if ! (cd "$work" && ./fuzzer -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=16384 -use_value_profile=1 \
            "${dictionary[@]}" -print_final_stats=1 corpus >fuzz.log 2>&1); then
        echo "Fuzzing $name failed; the log and the crashing input are in $work:" >&2
        tail -40 "$work/fuzz.log" >&2
        status=1
    else
        grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb)' "$work/fuzz.log" | sed "s/^/    $name: /"
    fi
done
exit "$status"
