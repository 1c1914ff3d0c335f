#!/bin/sh
# run-suites.sh - every suite of specl_tests (but wide) in two processes
# side by side: each is bound by one core (kernel builds on PoCL, float64
# references), so on two cores the suites take about half as long. The
# numeric suite (with the short emit suite) runs in one process, every
# other suite (`specl_tests --list`) in the other, about as long; each process's output is shown
# whole once both are done; then the one-launch paths' tests on a PoCL
# device of 8 compute units. The exit status is the first failure's.
#
#   sh tests/run-suites.sh BUILD_DIR
set -u
build=${1:?usage: run-suites.sh BUILD_DIR}
first="numeric emit"
rest=$("$build/specl_tests" --list | grep -vxF "$(printf '%s\n' $first)")
logs=$(mktemp -d) || exit 2
trap 'rm -rf "$logs"' EXIT
# shellcheck disable=SC2086
"$build/specl_tests" $first >"$logs/first" 2>&1 &
pid=$!
# shellcheck disable=SC2086
"$build/specl_tests" $rest >"$logs/rest" 2>&1
status_rest=$?
wait "$pid"
status_first=$?
cat "$logs/first" "$logs/rest"
echo "specl_tests" $first": exit $status_first;" $rest": exit $status_rest"
# The one-launch paths again with PoCL's CPU device of 8 compute units
# (worker threads), whatever the machine's cores: there their chunks
# spread over more work-groups and several rows take the path, which
# need more units than the forced cases' rows x 2 (on a GPU the variable
# changes nothing).
POCL_MAX_PTHREAD_COUNT=8 "$build/specl_tests" --only one-launch numeric
status_units=$?
echo "specl_tests --only one-launch numeric, 8 units: exit $status_units"
[ "$status_first" -eq 0 ] || exit "$status_first"
[ "$status_rest" -eq 0 ] || exit "$status_rest"
exit "$status_units"
