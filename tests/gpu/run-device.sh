#!/usr/bin/env bash
# On a GPU machine (see ../shared/DEVICE.md): build the MLIR-free side, run the
# GPU tests on the bundles in gpu-bundles/ (made with `dmc compile --reference`
# on a compiler machine), benchmark bert-large's kernels and memcheck a small
# bundle. Logs and figures go to $OUT.
set -o pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
nvidia-smi -L | tee "$OUT/device.txt"
prefix=()
[ -d gpu-deps ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/gpu-deps")
cmake -S . -B build-gpu -G Ninja -DDMC_COMPILER=OFF -DDMC_GPU_BUNDLES="$PWD/gpu-bundles" \
  "${prefix[@]}" > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
cmake --build build-gpu -j16 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
bench=build-gpu/runtime/tools/dmrt-bench
ctest --test-dir build-gpu -L gpu --output-on-failure 2>&1 | tee "$OUT/ctest-gpu.log" | tail -40
if [ -d gpu-bundles/bert-large.dmlib ]; then
  $bench gpu-bundles/bert-large.dmlib --kernel all --reference --reps 50 --flush-l2 \
    --json "$OUT/bert-large.json" 2>&1 | tee "$OUT/bert-large.txt"
fi
for b in gpu-bundles/small-*.dmlib; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $bench "$b" --kernel all \
    --contraction all --reference --reps 1 --warmup 0 > "build-gpu/memcheck-$(basename "$b").log" 2>&1
  echo "memcheck $(basename "$b"): exit $? ($(grep -h 'ERROR SUMMARY' "build-gpu/memcheck-$(basename "$b").log"))"
done | tee "$OUT/memcheck.txt"
# Configuration sweep: the same model compiled with --config-index N.
if [ -d gpu-bundles/sweep ]; then
  for b in gpu-bundles/sweep/*.dmlib; do
    mkdir -p build-gpu/sweep
    $bench "$b" --kernel all --reps 30 --flush-l2 --json "build-gpu/sweep/$(basename "$b" .dmlib).json" \
      > /dev/null 2>&1 || echo "sweep $(basename "$b"): exit $?"
  done
  python3 tests/gpu/sweep-summary.py build-gpu/sweep/*.json | tee "$OUT/sweep.txt"
fi
