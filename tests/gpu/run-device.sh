#!/usr/bin/env bash
# On a GPU machine (see ../shared/DEVICE.md): build the MLIR-free side, run the
# GPU tests on the bundles in gpu-bundles/ (made with `dmc compile --reference`
# on a compiler machine), benchmark bert-large's kernels (stream timing, the
# default, and once isolated with an L2 flush), memcheck the small bundles and
# summarise the configuration sweep. Results go to $OUT, at most 8 files:
# device.txt build.log ctest-gpu.log bert-large.{json,txt}
# bert-large-isolated.json memcheck.txt sweep.txt; other logs stay in build-gpu/.
set -o pipefail
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT" build-gpu
nvidia-smi -L | tee "$OUT/device.txt"
prefix=()
[ -d gpu-deps ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/gpu-deps")
cmake -S . -B build-gpu -G Ninja -DDMC_COMPILER=OFF -DDMC_GPU_BUNDLES="$PWD/gpu-bundles" \
  "${prefix[@]}" > build-gpu/configure.log 2>&1 || { tail -30 build-gpu/configure.log; exit 1; }
cmake --build build-gpu -j16 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
bench=build-gpu/runtime/tools/dmrt-bench
summary=tests/gpu/sweep-summary.py
ctest --test-dir build-gpu -L gpu --output-on-failure 2>&1 | tee "$OUT/ctest-gpu.log" | tail -40
if [ -d gpu-bundles/bert-large.dmlib ]; then
  $bench gpu-bundles/bert-large.dmlib --kernel all --reference --reps 50 \
    --json "$OUT/bert-large.json" 2>&1 | tee "$OUT/bert-large.txt"
  # The same kernels timed alone after an L2 flush (launch latency included):
  # its text stays in build-gpu/; one line per kernel, next to stream timing.
  $bench gpu-bundles/bert-large.dmlib --kernel all --reps 50 --timing isolated \
    --flush-l2 --json "$OUT/bert-large-isolated.json" \
    > build-gpu/bert-large-isolated.txt 2>&1 || echo "bert-large isolated: exit $?"
  [ -f "$OUT/bert-large-isolated.json" ] && [ -f "$OUT/bert-large.json" ] &&
    python3 $summary --compare "$OUT/bert-large.json" "$OUT/bert-large-isolated.json"
fi
for b in gpu-bundles/small-*.dmlib; do
  compute-sanitizer --tool memcheck --error-exitcode 9 $bench "$b" --kernel all \
    --contraction all --reference --reps 1 --warmup 0 > "build-gpu/memcheck-$(basename "$b").log" 2>&1
  echo "memcheck $(basename "$b"): exit $? ($(grep -h 'ERROR SUMMARY' "build-gpu/memcheck-$(basename "$b").log"))"
done | tee "$OUT/memcheck.txt"
# Every swept configuration of the small models against the references, and
# memcheck on a few (split column reductions included).
if [ -d gpu-bundles/sweep-small ]; then
  pass=0; fail=0
  for b in gpu-bundles/sweep-small/*.dmlib; do
    if $bench "$b" --kernel all --reference --reps 1 --warmup 0 \
        > "build-gpu/check-$(basename "$b").log" 2>&1; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1)); echo "sweep-small $(basename "$b"): FAILED"
      grep -E "FAIL|error" "build-gpu/check-$(basename "$b").log" | head -5
    fi
  done
  echo "sweep-small: $pass bundles pass, $fail fail"
  for b in gpu-bundles/sweep-small/small-bert-large-c{0,2,5}.dmlib; do
    [ -d "$b" ] || continue
    compute-sanitizer --tool memcheck --error-exitcode 9 $bench "$b" --kernel all \
      --reference --reps 1 --warmup 0 > "build-gpu/memcheck-$(basename "$b").log" 2>&1
    echo "memcheck $(basename "$b"): exit $? ($(grep -h 'ERROR SUMMARY' "build-gpu/memcheck-$(basename "$b").log"))"
  done
fi 2>&1 | tee -a "$OUT/memcheck.txt"
# Configuration sweep: the same model compiled with --config-index N.
if [ -d gpu-bundles/sweep ]; then
  for b in gpu-bundles/sweep/*.dmlib; do
    mkdir -p build-gpu/sweep
    $bench "$b" --kernel all --reps 30 --json "build-gpu/sweep/$(basename "$b" .dmlib).json" \
      > /dev/null 2>&1 || echo "sweep $(basename "$b"): exit $?"
  done
  python3 $summary build-gpu/sweep/*.json | tee "$OUT/sweep.txt"
fi
