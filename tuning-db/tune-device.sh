#!/usr/bin/env bash
# On a GPU machine (../shared/DEVICE.md), from the repository root: builds the
# MLIR-free tools (dmrt-bench, dmrt-tune, dmc-db) into build-gpu/ and runs
# dmrt-tune on the candidate bundles that `dmc tune MODEL --emit-candidates DIR`
# wrote on a compiler machine: every bundle measured and checked by dmrt-bench,
# the checked measurements appended to DB, progress per bundle.
# Usage: tuning-db/tune-device.sh DIR DB [--time-budget S] [--reps N] [--algorithms N] [--resume]
#        [--remeasure]
#        [--devices LIST | --all-gpus]
# --all-gpus: every GPU nvidia-smi lists, measuring in parallel into DB (dmrt-tune --devices).
# Then the default configuration's whole step (DIR/default.dmlib) is timed back to
# back with CUDA graphs on the first GPU and recorded as a `step` record
# (dmc-run --bench --record DB): what dmc compile --db calibrates its predictions by.
# Exit: dmrt-tune's (0 ok, 1 a bundle failed, 2 usage, 77 no GPU), 1 when the
# build or the step's record failed. Then, on the compiler machine: dmc compile MODEL --db DB.
set -o pipefail
[ $# -ge 2 ] || { echo "usage: tuning-db/tune-device.sh DIR DB [--time-budget S] [--reps N] [--algorithms N] [--resume] [--remeasure] [--devices LIST | --all-gpus]" >&2; exit 2; }
args=()
for a in "$@"; do
  if [ "$a" = "--all-gpus" ]; then
    n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
    [ "$n" -ge 1 ] || { echo "tune-device: --all-gpus: nvidia-smi lists no GPU" >&2; exit 77; }
    args+=(--devices "$(seq -s, 0 $((n - 1)))")
  else
    args+=("$a")
  fi
done
mkdir -p build-gpu
prefix=()
[ -d gpu-deps ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/gpu-deps")
if [ ! -f build-gpu/build.ninja ]; then
  cmake -S . -B build-gpu -G Ninja -DDMC_COMPILER=OFF "${prefix[@]}" > build-gpu/configure.log 2>&1 ||
    { tail -30 build-gpu/configure.log; exit 1; }
fi
cmake --build build-gpu -j"$(nproc)" --target dmrt-bench dmrt-tune dmc-db dmc-run > build-gpu/tune-build.log 2>&1 ||
  { tail -30 build-gpu/tune-build.log; exit 1; }
build-gpu/bin/dmrt-tune "${args[@]}"
rc=$?
[ $rc -eq 0 ] || exit $rc
if [ -d "$1/default.dmlib" ]; then
  echo "tune-device: the default configuration's whole step (dmc-run $1/default.dmlib --bench --record $2)"
  build-gpu/bin/dmc-run "$1/default.dmlib" --bench --reps 300 --record "$2" 2>&1 |
    grep -E "CUDA graphs  |the GPU|recorded" || exit 1
fi
