#!/usr/bin/env bash
# gpu_check_dry_run (ctest, label unit): scripts/gpu-check without a GPU. --dry-run names every
# step with the build tree's binaries and exits 0; with no GPU visible (an nvidia-smi that lists
# none) the script says so and exits 77 (skipped) before it starts anything; a bad option is 2.
# Usage: gpu_check_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1 build=$2
fail() { echo "FAILED: $*" >&2; exit 1; }

out=$("$src/scripts/gpu-check" --dry-run --build "$build" 2>&1) || fail "--dry-run exited $?: $out"
echo "$out"
for step in gpu-visible plugin gpu-tests tour tour-on-gpu gpus-page stop resume; do
  grep -q "^  $step " <<<"$out" || fail "--dry-run does not list the step $step"
done
grep -q "$build/trainer/ringside-trainer --backend auto" <<<"$out" || fail "--dry-run names no trainer of $build"
grep -q "$build/gui/ringside --screenshots" <<<"$out" || fail "--dry-run names no GUI of $build"

fake=$(mktemp -d); trap 'rm -rf "$fake"' EXIT
printf '#!/bin/sh\necho "No devices were found"\nexit 6\n' >"$fake/nvidia-smi"; chmod +x "$fake/nvidia-smi"
PATH="$fake:$PATH" "$src/scripts/gpu-check" --build "$build" "$fake/shots" >"$fake/out" 2>&1
code=$?
cat "$fake/out"
((code == 77)) || fail "without a GPU: exit $code, expected 77"
grep -q "gpu-check: no GPU visible" "$fake/out" || fail "without a GPU: no 'no GPU visible' message"
[[ ! -e $fake/shots ]] || fail "without a GPU it wrote $fake/shots"

"$src/scripts/gpu-check" --no-such-option >/dev/null 2>&1
code=$?
((code == 2)) || fail "a bad option: exit $code, expected 2"
echo "gpu_check_test: all checks passed"
