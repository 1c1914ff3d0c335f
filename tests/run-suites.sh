#!/bin/sh
# run-suites.sh - every suite of specl_tests (but wide) in two processes
# side by side: each is bound by one core (kernel builds on PoCL, float64
# references), so on two cores the suites take about half as long. The
# numeric suite (with the short emit suite) runs in one process, every
# other suite (`specl_tests --list`) in the other, about as long; each process's output is shown
# whole once both are done, and the exit status is the first failure's.
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
[ "$status_first" -eq 0 ] || exit "$status_first"
exit "$status_rest"
