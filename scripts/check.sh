#!/usr/bin/env bash
# `make check`: every lit and gtest test, then the dialect and pass tests again
# with --verify-roundtrip on every dt-opt call. Ends with one summary line.
set -uo pipefail
build=${1:-build}
lit=${LIT:-/usr/lib/llvm-22/bin/lit}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

status=0
"$lit" -sv "$build/test" "$build/test/Unit" 2>&1 | tee -a "$log" || status=1
DT_OPT_EXTRA=--verify-roundtrip "$lit" -sv "$build/test" \
  --filter='Dialect|Transforms' 2>&1 | tee -a "$log" || status=1
# The GPU execution tests: skipped (unsupported) where there is no GPU;
# where there is one, they run on the artifacts scripts/gpu-bundle.sh makes.
root=$(cd "$(dirname "$0")/.." && pwd)
if python3 -c "import sys; sys.path.insert(0, '$root/test/GPU'); import gpu_probe; sys.exit(gpu_probe.gpu_count() == 0)"; then
  "$root/scripts/gpu-bundle.sh" "$build" 2>&1 | tee -a "$log" || status=1
fi
"$lit" -sv "$root/test/GPU" --param bin="$build/bin" \
  --param artifacts="$build/gpu-bundle/artifacts" 2>&1 | tee -a "$log" || status=1

# lit's summary lines look like "  Passed  : 25 (100.00%)".
count() {
  awk -v k="$1" '{ line = $0; gsub(/ /, "", line); split(line, f, ":") }
                 f[1] == k { split(f[2], v, "("); n += v[1] } END { print n + 0 }' "$log"
}
passed=$(( $(count Passed) + $(count ExpectedlyFailed) ))
failed=$(( $(count Failed) + $(count Unresolved) + $(count XPassed) ))
skipped=$(count Unsupported)
echo
echo "check: ${passed} passed, ${failed} failed, ${skipped} skipped"
[[ $passed -gt 0 ]] || status=1
exit $status
