#!/usr/bin/env bash
# On a GPU machine (see ../shared/DEVICE.md), from the repository root, with
# gpu-bundles/ (tests/gpu/make-bundles.sh: gpu-bundles/bench/) and gpu-deps/
# carried: builds the MLIR-free runtime into build-gpu/ as tests/gpu/run-device.sh
# does (a no-op when it is built), then runs the benchmark (bench/run.py) with any
# arguments given here, its output folder being $OUT (default gpu-out):
#   $OUT/bench.json  every measurement, the environment, failures with reasons
#   $OUT/bench.md    the table (python3 bench/readme_table.py $OUT/bench.json
#                    --update README.md puts it into the README)
#   $OUT/bench.png   the chart
#   $OUT/bench.log   progress lines and the table
#   $OUT/build.log   the runtime build's log, only when it failed
# Exit status: bench/run.py's (0 every system ran on every case; 1 some failed or
# were skipped; 2 usage error or no GPU), or 1 when the build failed.
#   OUT=gpu-out bench/run-device.sh [--quick] [--cases A,B] [--steps N] ...
set -o pipefail
OUT=${OUT:-$PWD/gpu-out}
PYTHON=${PYTHON:-python3}
mkdir -p "$OUT" build-gpu
[ -d gpu-bundles/bench ] || { echo "bench: no gpu-bundles/bench (run tests/gpu/make-bundles.sh and carry gpu-bundles)" >&2; exit 2; }
nvidia-smi -L
prefix=()
[ -d gpu-deps ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/gpu-deps")
if [ ! -f build-gpu/build.ninja ]; then
  cmake -S . -B build-gpu -G Ninja -DDMC_COMPILER=OFF -DDMC_GPU_BUNDLES="$PWD/gpu-bundles" \
    "${prefix[@]}" > build-gpu/configure.log 2>&1 || { tail -30 build-gpu/configure.log; exit 1; }
fi
start=$(date +%s)
# Only what the benchmark needs: libdmrt.so (python/dmc) and dmc-run (its fallback).
if ! cmake --build build-gpu -j"$(nproc)" --target dmrt-c dmc-run > build-gpu/build.log 2>&1; then
  cp build-gpu/build.log "$OUT/build.log"
  tail -30 build-gpu/build.log
  exit 1
fi
echo "bench: runtime built in $(( $(date +%s) - start )) s"
"$PYTHON" bench/run.py --out "$OUT" "$@" 2>&1 | tee "$OUT/bench.log"
