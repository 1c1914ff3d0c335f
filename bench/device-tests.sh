#!/bin/sh
# device-tests.sh - the device suites (numeric, sweep, stub contract) and
# the wide sweep on one OpenCL device, through emitted stubs. The suites
# run in JOBS processes (default: the host's cores, at most 12) that share
# them test by test (specl_tests --claim: each process takes the next
# test none has taken, numeric's one by one, sweep and stub whole), and
# each of the wide sweep's PARTS in a process of its own: each process is
# bound by one host core (kernel builds, inputs, the float64 reference).
# WHAT picks the suites (all, or suites or wide alone, for hosts that limit
# one command's time). Logs go to LOGDIR.
#
#   SPECL_DEVICE=0:0 sh bench/device-tests.sh LOGDIR [PARTS] [WHAT]
#
# Run from the repository root after `make build/specl_tests`; the host
# needs CUnit's shared library (specl_tests links it), a C compiler and
# OpenCL's headers (SPECL_STUB_CFLAGS=-IDIR where they are not installed).
set -u
logdir=${1:?usage: device-tests.sh LOGDIR [PARTS] [all|suites|wide]}
parts=${2:-8}
what=${3:-all}
case $what in
all | suites | wide) ;;
*) echo "device-tests.sh: WHAT is all, suites or wide (got '$what')" >&2
   exit 2 ;;
esac
mkdir -p "$logdir"
: "${SPECL_DEVICE:?set SPECL_DEVICE=P:D}"
export SPECL_DEVICE

start=$(date +%s)
pids=""
if [ "$what" != suites ]; then
    k=0
    while [ "$k" -lt "$parts" ]; do
        SPECL_WIDE_PART="$k/$parts" build/specl_tests --wide wide \
            >"$logdir/wide-$k.txt" 2>&1 &
        pids="$pids $!"
        k=$((k + 1))
    done
fi
if [ "$what" != wide ]; then
    jobs=${JOBS:-$(nproc 2>/dev/null || echo 4)}
    [ "$jobs" -gt 12 ] && jobs=12
    claims=$(mktemp -d) || exit 2
    trap 'rm -rf "$claims"' EXIT
    j=0
    while [ "$j" -lt "$jobs" ]; do
        build/specl_tests --claim "$claims" numeric sweep stub \
            >"$logdir/suites-$j.txt" 2>&1 &
        pids="$pids $!"
        j=$((j + 1))
    done
fi
failed=0
for pid in $pids; do
    wait "$pid" || failed=$((failed + 1))
done
echo "$what: $failed processes failed, $(($(date +%s) - start)) s" \
    >>"$logdir/summary.txt"
# One line per suite run: kernels, cases, failures; and CUnit's totals.
logs=$(ls "$logdir"/*.txt | grep -v summary.txt)
# shellcheck disable=SC2086
grep -h "kernels built\|cases run" $logs >>"$logdir/summary.txt"
# shellcheck disable=SC2086
grep -h -A3 "Run Summary" $logs | grep "tests\|asserts" \
    >>"$logdir/summary.txt"
# The suites' processes' logs as one file (a host that returns a limited
# count of files returns it whole).
if ls "$logdir"/suites-*.txt >/dev/null 2>&1; then
    for f in "$logdir"/suites-*.txt; do
        echo "== $f"
        cat "$f"
    done >"$logdir/suites.log" && rm -f "$logdir"/suites-*.txt
fi
cat "$logdir/summary.txt"
[ "$failed" -eq 0 ]
