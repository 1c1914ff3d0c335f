#!/bin/sh
# run-suites.sh - every suite of specl_tests (but wide) in two processes
# side by side, sharing the tests by --claim: each process takes the next
# test no process has taken when it ends one. Each is bound by one core
# (kernel builds on PoCL, float64 references), and a few tests take far
# longer than the rest, the more so with PoCL's kernel cache empty (a
# fresh machine): fixed shares left one process minutes behind the
# other. Each process's output is shown whole once both are done; then
# the one-launch paths' tests on a PoCL device of 8 compute units. The
# exit status is the first failure's.
#
#   sh tests/run-suites.sh BUILD_DIR
set -u
build=${1:?usage: run-suites.sh BUILD_DIR}
logs=$(mktemp -d) || exit 2
trap 'rm -rf "$logs"' EXIT
mkdir "$logs/claims" || exit 2
"$build/specl_tests" --claim "$logs/claims" >"$logs/first" 2>&1 &
pid=$!
"$build/specl_tests" --claim "$logs/claims" >"$logs/second" 2>&1
status_second=$?
wait "$pid"
status_first=$?
cat "$logs/first" "$logs/second"
echo "specl_tests, two processes: exit $status_first and $status_second;" \
    "$(ls "$logs/claims" | wc -l) tests claimed"
# The one-launch paths again with PoCL's CPU device of 8 compute units
# (worker threads), whatever the machine's cores: there their chunks
# spread over more work-groups and several rows take the path, which
# need more units than the forced cases' rows x 2 (on a GPU the variable
# changes nothing).
POCL_MAX_PTHREAD_COUNT=8 "$build/specl_tests" --only one-launch numeric
status_units=$?
echo "specl_tests --only one-launch numeric, 8 units: exit $status_units"
[ "$status_first" -eq 0 ] || exit "$status_first"
[ "$status_second" -eq 0 ] || exit "$status_second"
exit "$status_units"
