#!/bin/sh
# device-tests.sh - the device suites (numeric, sweep, stub contract) and
# the wide sweep on one OpenCL device, through emitted stubs, with the wide
# sweep split over PARTS processes (it is bound by one host core each: the
# inputs and the float64 reference). Logs go to LOGDIR.
#
#   SPECL_DEVICE=0:0 sh bench/device-tests.sh LOGDIR [PARTS]
#
# Run from the repository root after `make build/specl_tests`.
set -u
logdir=${1:?usage: device-tests.sh LOGDIR [PARTS]}
parts=${2:-8}
mkdir -p "$logdir"
: "${SPECL_DEVICE:?set SPECL_DEVICE=P:D}"
export SPECL_DEVICE

start=$(date +%s)
# The wide sweep's parts first, in the background: they take longest.
k=0
while [ "$k" -lt "$parts" ]; do
    SPECL_WIDE_PART="$k/$parts" build/specl_tests --wide wide \
        >"$logdir/wide-$k.txt" 2>&1 &
    k=$((k + 1))
done
build/specl_tests numeric sweep stub >"$logdir/suites.txt" 2>&1
echo "suites: exit $? after $(($(date +%s) - start)) s" >>"$logdir/summary.txt"
wait
echo "wide ($parts parts): done after $(($(date +%s) - start)) s" \
    >>"$logdir/summary.txt"
# One line per suite run: kernels, cases, failures; and CUnit's totals.
logs=$(ls "$logdir"/suites.txt "$logdir"/wide-*.txt)
# shellcheck disable=SC2086
grep -h "kernels built\|cases run" $logs >>"$logdir/summary.txt"
# shellcheck disable=SC2086
grep -h -A3 "Run Summary" $logs | grep "tests\|asserts" \
    >>"$logdir/summary.txt"
cat "$logdir/summary.txt"
