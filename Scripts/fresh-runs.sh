#!/usr/bin/env bash
# Runs the whole test command as CI does, from fresh clones of this repository's HEAD, several
# times in a row, with other processes keeping cores busy: the proof that the suite passes every
# time, not just once.
#
# Usage: Scripts/fresh-runs.sh [--runs N] [--load K] [--commit REV]
#   --runs N      how many runs, one after another (default 5)
#   --load K      busy processes beside each run (default 1)
#   --commit REV  what to clone and check out (default HEAD)
# Each run clones into a temporary folder, runs `CI=true bash .ci/run` there, keeps its output in
# .build/fresh-runs/run-N.log and deletes the clone. The summary (.build/fresh-runs/summary.txt)
# has one line a run with its exit status, duration and closing `Tests:` line; the exit status is
# non-zero when any run failed. The busy processes end with each run (and after 90 minutes in any
# case).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=5 load=1 commit=HEAD
while [ $# -gt 0 ]; do
    case $1 in
        --runs) runs=$2; shift 2 ;;
        --load) load=$2; shift 2 ;;
        --commit) commit=$2; shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "fresh-runs.sh: unknown argument $1 (see --help)" >&2; exit 64 ;;
    esac
done
commit=$(git rev-parse --verify "$commit^{commit}")
out=$PWD/.build/fresh-runs
mkdir -p "$out"
summary=$out/summary.txt
echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'): $runs fresh-clone runs of ${commit:0:7}, $load busy processes, $(nproc) cores" >>"$summary"

busy_pids=() clone=""
cleanup() {
    for pid in "${busy_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    busy_pids=()
    if [ -n "$clone" ]; then rm -rf "$clone"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

status=0
for run in $(seq "$runs"); do
    clone=$(mktemp -d /tmp/courier-fresh-XXXXXX)
    git clone -q "$PWD" "$clone"
    git -C "$clone" checkout -q "$commit"
    for _ in $(seq "$load"); do
        timeout 5400 bash -c 'while :; do :; done' &
        busy_pids+=($!)
    done
    started=$(date +%s)
    run_status=0
    (cd "$clone" && CI=true bash .ci/run </dev/null >"$out/run-$run.log" 2>&1) || run_status=$?
    cleanup
    clone=""
    line="run $run: exit $run_status after $(( $(date +%s) - started )) s; $(grep -E '^Tests: ' "$out/run-$run.log" || echo 'no closing line')"
    echo "$line" | tee -a "$summary"
    [ "$run_status" = 0 ] || status=1
done
exit "$status"
