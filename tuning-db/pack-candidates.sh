#!/usr/bin/env bash
# On the compiler machine, from the repository root: the candidate bundles of each
# MODEL (`dmc tune MODEL --emit-candidates gpu-tune/NAME`: the default bundle with
# interpreter references, one bundle per knob configuration, and the layout
# candidates l<n>_<i>.dmlib) packed into gpu-tune.tar.xz, so that a GPU machine gets
# them as one small file (bert-large without the layout candidates: 44 bundles,
# 84 MB on disk, 6 MB packed; the device tool carries 64 MiB).
# Usage: tuning-db/pack-candidates.sh [--build DIR] [--prune-kernels N] [--candidates N]
#        [--layout-candidates N] [--path-candidates N] MODEL.json [MODEL.json ...]
# --prune-kernels N: passed to dmc tune (default 8: each kernel's default and
# the cost model's 7 cheapest others; 0: every feasible configuration, for
# studies of the cost model and the report's violins). --candidates N and
# --layout-candidates N: passed to dmc tune (fewer bundles: N knob candidates,
# the first N layout candidates; 0: none), to measure a changed graph's new
# kernels without the whole space. --path-candidates N: passed to dmc tune (knob
# candidates of the kernels only a path bundle has, <path>-k<j>.dmlib; 1: none).
# On the GPU machine (../shared/DEVICE.md), with gpu-deps carried too:
#   tar xJf gpu-tune.tar.xz
#   tuning-db/tune-device.sh gpu-tune/NAME DB [--time-budget S] [--algorithms N]
# then here: dmc-db merge tuning-db/GPU.jsonl DB; dmc compile MODEL --db tuning-db/GPU.jsonl.
set -euo pipefail
build=build
prune=()
usage="usage: tuning-db/pack-candidates.sh [--build DIR] [--prune-kernels N] [--candidates N] [--layout-candidates N] [--path-candidates N] MODEL.json [MODEL.json ...]"
while [ $# -ge 2 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --prune-kernels)
      [[ "$2" =~ ^[0-9]+$ ]] || { echo "pack-candidates: --prune-kernels: '$2' is not a count (0: every configuration)" >&2; exit 2; }
      prune+=(--prune-kernels "$2"); shift 2 ;;
    --candidates|--layout-candidates|--path-candidates)
      [[ "$2" =~ ^[0-9]+$ ]] || { echo "pack-candidates: $1: '$2' is not a count" >&2; exit 2; }
      prune+=("$1" "$2"); shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
dmc="$build/bin/dmc"
[ -x "$dmc" ] || { echo "pack-candidates: $dmc not found (build first)" >&2; exit 1; }
rm -rf gpu-tune gpu-tune.tar.xz
mkdir -p gpu-tune
for model in "$@"; do
  [ -f "$model" ] || { echo "pack-candidates: no model file $model" >&2; exit 1; }
  name=$(basename "$model" .json)
  echo "pack-candidates: $name"
  "$dmc" tune "$model" "${prune[@]}" --emit-candidates "gpu-tune/$name" | tail -1
done
tar cf - gpu-tune | xz -T0 -6 > gpu-tune.tar.xz
echo "pack-candidates: gpu-tune.tar.xz ($(du -h gpu-tune.tar.xz | cut -f1)) for: $*"
