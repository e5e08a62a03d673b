#!/usr/bin/env bash
# Runs chosen tests many times to find the ones that fail by chance, and counts failures per test.
#
# Usage: Scripts/stress.sh [--runs N] [--tsan] [--load K] [--transport curl|urlsession]
#                          [--seconds S] [--skip REGEX] FILTER...
#   FILTER       a `swift test --filter` expression (a class, Class/testName, or a regular
#                expression); several are run one after another, each N times
#   --runs N     how many times each filter runs (default 20)
#   --tsan       under ThreadSanitizer (a build of its own; a reported race fails the run)
#   --load K     K other processes keep K cores busy meanwhile (default 0)
#   --transport  the network transport of the integration tests (default curl)
#   --seconds S  stop starting new runs of a filter after S seconds (default: no limit)
#   --skip REGEX leave out the tests that match (`swift test --skip`), in every run
# The local servers of the integration tests are started first (Scripts/servers.sh) and stopped
# whatever happens, as are the busy processes. Each run's output is kept in .build/stress/ only
# when it failed. The summary, also in .build/stress/summary.txt, lists per filter the runs,
# the failed runs, and each test that failed with how often; the exit status is non-zero when any
# run failed.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/servers.sh

runs=20 tsan=0 load=0 transport=curl seconds=0
filters=() skips=()
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --tsan) tsan=1; shift ;;
        --load) load=$2; shift 2 ;;
        --transport) transport=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --skip) skips+=(--skip "$2"); shift 2 ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "stress.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
        *) filters+=("$1"); shift ;;
    esac
done
[ ${#filters[@]} -gt 0 ] || { echo "stress.sh: name at least one test filter (see --help)" >&2; exit 64; }

busy_pids=()
cleanup() {
    for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    stop_test_servers
}
trap cleanup EXIT
trap 'exit 130' INT TERM

install_test_tools
start_test_servers
export COURIER_TEST_TRANSPORT=$transport

sanitize=()
[ "$tsan" = 1 ] && sanitize=(--sanitize=thread)
echo "==> swift build --build-tests ${sanitize[*]}"
mkdir -p .build/stress
if ! swift build --build-tests "${sanitize[@]}" >.build/stress/build.log 2>&1; then
    cat .build/stress/build.log
    echo "stress.sh: the build failed" >&2
    exit 1
fi

for _ in $(seq "$load"); do
    # A busy loop per core to load, ended by the trap (and bounded by timeout in any case).
    timeout 7200 bash -c 'while :; do :; done' &
    busy_pids+=($!)
done

out=.build/stress
summary=$out/summary.txt
{
    echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'): $runs runs per filter, transport $transport$([ "$tsan" = 1 ] && echo ', ThreadSanitizer')$([ "$load" -gt 0 ] && echo ", $load busy processes"), $(nproc) cores"
} >"$summary"
status=0
for filter in "${filters[@]}"; do
    safe=${filter//[^A-Za-z0-9]/_}
    failed_runs=0 done_runs=0 tests=0
    started=$(date +%s)
    : >"$out/$safe.failures"
    for run in $(seq "$runs"); do
        if [ "$seconds" -gt 0 ] && [ $(( $(date +%s) - started )) -ge "$seconds" ]; then break; fi
        log=$out/$safe.run.log
        run_status=0
        swift test --skip-build --disable-swift-testing "${sanitize[@]}" --filter "$filter" "${skips[@]}" >"$log" 2>&1 || run_status=$?
        done_runs=$((done_runs + 1))
        tests=$(grep -c "^Test Case .* started" "$log" || true)
        [ "$tests" -gt 0 ] || { echo "stress.sh: $filter matches no test" >&2; status=1; break; }
        if [ "$run_status" != 0 ]; then
            failed_runs=$((failed_runs + 1))
            cp "$log" "$out/$safe.failed-$run.log"
            # The failed test cases; a case a crash interrupted has a start and no end.
            awk '/^Test Case .* started/ { name = $3; open[name] = 1 }
                 /^Test Case .* (passed|skipped) \(/ { delete open[$3] }
                 /^Test Case .* failed \(/ { print $3; delete open[$3] }
                 END { for (name in open) print name " (interrupted)" }' "$log" >>"$out/$safe.failures"
            grep -q "ThreadSanitizer" "$log" && echo "ThreadSanitizer report" >>"$out/$safe.failures"
            echo "    run $run of $filter failed (exit $run_status): $out/$safe.failed-$run.log"
        fi
    done
    line="$filter: $done_runs runs of $tests tests, $failed_runs failed, $(( $(date +%s) - started )) s"
    echo "$line" | tee -a "$summary"
    if [ -s "$out/$safe.failures" ]; then
        sort "$out/$safe.failures" | uniq -c | sort -rn | sed 's/^/    /' | tee -a "$summary"
    fi
    [ "$failed_runs" = 0 ] || status=1
    rm -f "$out/$safe.run.log"
done
echo "Summary in $summary"
exit "$status"
