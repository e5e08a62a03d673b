#!/usr/bin/env bash
# Runs Courier's whole test suite, integration tests included, on a fresh Linux machine.
#
# Installs what the tests need and starts the local servers (Scripts/servers.sh: httpbin, an upload
# sink, nginx with TLS, static files and a cache origin, a forward proxy, a hostile server, a
# server-sent-events server; Python packages into .build/venv, nginx from Debian through apt-get,
# which needs root or sudo), then runs these stages, each to its end even when an earlier one
# failed:
#   build        on Linux, `swift build --build-tests` with libcurl's headers hidden (building
#                needs nothing but the toolchain)
#   check-curl   Courier's libcurl declarations against the real headers (Scripts/check-curl.sh)
#   check-sqlite Courier's SQLite declarations against the real header (Scripts/check-sqlite.sh)
#   curl         `swift test`, the network tests through the curl transport
#   urlsession   the network tests again through URLSession
#   tour         the example program against httpbin and the SSE server, start to exit
#   readme       README's Swift samples built as a package of their own and its quick start run
#                against httpbin (Scripts/check-readme.sh)
#   tsan         `swift test --sanitize=thread`, and on Linux its network tests through URLSession
#   fuzz         the parsers of what servers send, fuzzed for a bounded time (Scripts/fuzz.sh)
#   docs         the documentation, any warning an error (Scripts/docs.sh)
# Each stage's output is shown and kept in .build/test-logs/. The run ends with one line counting
# every test case of every stage, `Tests: N passed, M failed, K skipped` (a test case a crash
# interrupted counts as failed), the stages that failed if any, and a non-zero exit status then.
# The servers are stopped whatever happens.
#
# Extra arguments go to a single `swift test` run instead, with the servers up (for example:
# Scripts/test.sh --filter Integration); COURIER_TEST_TRANSPORT=curl or urlsession chooses the
# network transport of that run. COURIER_FUZZ_SECONDS sets the fuzzing time per target (60).
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/servers.sh

trap stop_test_servers EXIT
trap 'exit 130' INT TERM
install_test_tools
start_test_servers

if [ $# -gt 0 ]; then
    swift test --disable-swift-testing "$@"
    exit
fi

logs=.build/test-logs
rm -rf "$logs"
mkdir -p "$logs"
stages=()
failed_stages=()
# NAME COMMAND...: runs one stage, its output shown and kept in $logs/NAME.log.
stage() {
    local name=$1
    shift
    stages+=("$name")
    echo "==> [$name] $*"
    if "$@" 2>&1 | tee "$logs/$name.log"; then
        return 0
    fi
    failed_stages+=("$name")
    echo "==> [$name] failed" >&2
}

tour() {
    if swift run --skip-build CourierExample --base-url "$COURIER_HTTPBIN_URL" --events-url "$COURIER_SSE_URL" \
        >.build/tour.log 2>&1; then
        echo "The tour ran to its end ($(grep -c '^[0-9]*\. ' .build/tour.log) steps; output in .build/tour.log)"
    else
        echo "The tour against httpbin failed; its output:"
        cat .build/tour.log
        return 1
    fi
}

if [ "$(uname)" = Linux ]; then
    # The build the tests then use is made with libcurl's and SQLite's headers hidden (they may be
    # installed: the checks below install them). Nothing links -lcurl or -lsqlite3; Courier opens
    # libcurl.so.4 and libsqlite3.so.0 at run time.
    if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1; then
        stage build unshare -m bash -c 'set -e
            for dir in /usr/include/curl /usr/include/*-linux-gnu/curl; do
                if [ -d "$dir" ]; then mount -t tmpfs none "$dir"; fi
            done
            for file in /usr/include/sqlite3.h /usr/include/*-linux-gnu/sqlite3.h; do
                if [ -f "$file" ]; then mount --bind /dev/null "$file"; fi
            done
            swift build --build-tests'
    else
        stage build swift build --build-tests
    fi
    stage check-curl Scripts/check-curl.sh
    stage check-sqlite Scripts/check-sqlite.sh
    # The whole suite through the curl transport, then everything that touches the network again
    # through URLSession: parity between the two is tested, not assumed.
    stage curl env COURIER_TEST_TRANSPORT=curl swift test --disable-swift-testing
    stage urlsession env COURIER_TEST_TRANSPORT=urlsession swift test --disable-swift-testing --skip-build \
        --filter 'Integration|FaultStress'
    # A whole program on the curl transport, start to exit; it must end with status 0 (OpenSSL's
    # exit handler once crashed processes that loaded libcurl).
    stage tour tour
else
    stage curl swift test --disable-swift-testing
fi
stage readme Scripts/check-readme.sh
# ThreadSanitizer over everything but the two long network tests (they run above), and on Linux
# the network tests once more through URLSession. A race makes a run exit non-zero even when every
# test passes.
stage tsan env COURIER_TEST_TRANSPORT=curl swift test --disable-swift-testing --sanitize=thread \
    --skip FaultStressTests --skip testLargeMultipartUpload
if [ "$(uname)" = Linux ]; then
    stage tsan-urlsession env COURIER_TEST_TRANSPORT=urlsession swift test --disable-swift-testing --sanitize=thread \
        --skip-build --filter Integration --skip testLargeMultipartUpload
    stage fuzz Scripts/fuzz.sh "${COURIER_FUZZ_SECONDS:-60}"
fi
stage docs Scripts/docs.sh

# One closing line for every test case that ran, in every stage.
cat "$logs"/*.log | awk '
    /^Test Case .* started/ { started++ }
    /^Test Case .* passed \(/ { passed++ }
    /^Test Case .* failed \(/ { failed++ }
    /^Test Case .* skipped \(/ { skipped++ }
    END {
        interrupted = started - passed - failed - skipped
        if (interrupted > 0) failed += interrupted
        printf "Tests: %d passed, %d failed, %d skipped\n", passed, failed, skipped
    }'
if [ ${#failed_stages[@]} -gt 0 ]; then
    # What failed, by stage, with its assertion messages, so that the end of the output (all a CI
    # page may keep) names the test; a test case a crash interrupted is named by its start line.
    for log in "$logs"/*.log; do
        awk -v stage="$(basename "$log" .log)" '
            /^Test Case .* started/ { current = $0; sub(/ started.*/, "", current); running[current] = 1 }
            /^Test Case .* (passed|failed|skipped) \(/ { done = $0; sub(/ (passed|failed|skipped) \(.*/, "", done); delete running[done] }
            /error: -\[|: error: / { print "==> [" stage "] " $0 }
            /^Test Case .* failed \(/ { print "==> [" stage "] " $0 }
            END { for (name in running) print "==> [" stage "] interrupted: " name }
        ' "$log" | head -40 >&2
    done
    echo "Failed stages: ${failed_stages[*]} (of ${stages[*]}); their output is in $logs/" >&2
    exit 1
fi
echo "All stages passed: ${stages[*]}"
