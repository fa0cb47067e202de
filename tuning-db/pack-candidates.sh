#!/usr/bin/env bash
# On the compiler machine, from the repository root: the candidate bundles of each
# MODEL (`dmc tune MODEL --emit-candidates gpu-tune/NAME`: the default bundle with
# interpreter references, one bundle per knob configuration, and the layout
# candidates l<n>_<i>.dmlib) packed into gpu-tune.tar.xz, so that a GPU machine gets
# them as one small file (bert-large without the layout candidates: 44 bundles,
# 84 MB on disk, 6 MB packed; the device tool carries 64 MiB).
# Usage: tuning-db/pack-candidates.sh [--build DIR] MODEL.json [MODEL.json ...]
# On the GPU machine (../shared/DEVICE.md), with gpu-deps carried too:
#   tar xJf gpu-tune.tar.xz
#   tuning-db/tune-device.sh gpu-tune/NAME DB [--time-budget S] [--algorithms N]
# then here: dmc-db merge tuning-db/GPU.jsonl DB; dmc compile MODEL --db tuning-db/GPU.jsonl.
set -euo pipefail
build=build
if [ "${1:-}" = "--build" ]; then build=$2; shift 2; fi
[ $# -ge 1 ] || { echo "usage: tuning-db/pack-candidates.sh [--build DIR] MODEL.json [MODEL.json ...]" >&2; exit 2; }
dmc="$build/bin/dmc"
[ -x "$dmc" ] || { echo "pack-candidates: $dmc not found (build first)" >&2; exit 1; }
rm -rf gpu-tune gpu-tune.tar.xz
mkdir -p gpu-tune
for model in "$@"; do
  [ -f "$model" ] || { echo "pack-candidates: no model file $model" >&2; exit 1; }
  name=$(basename "$model" .json)
  echo "pack-candidates: $name"
  "$dmc" tune "$model" --emit-candidates "gpu-tune/$name" | tail -1
done
tar cf - gpu-tune | xz -T0 -6 > gpu-tune.tar.xz
echo "pack-candidates: gpu-tune.tar.xz ($(du -h gpu-tune.tar.xz | cut -f1)) for: $*"
