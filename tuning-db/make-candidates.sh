#!/usr/bin/env bash
# On a compiler machine: the candidate bundles of one model for the kernel-knob
# tuner (tuning-db/tune-device.sh on a GPU machine), into OUT (ignored by git
# when under gpu-bundles/; carried to the device):
#   OUT/default.dmlib   the default configuration, with interpreter references
#                       (--reference-samples, default 16384 per output)
#   OUT/cN.dmlib        N = 0 .. COUNT-1: every kernel in its N-th feasible knob
#                       configuration (dmc compile --config-index N); layouts and
#                       contractions as the default's, so the default's reference
#                       files are theirs too (copied: same steps, same inputs,
#                       same semantics) and every candidate is checked
#   OUT/SOURCE          the model and the commit they were compiled at
# Usage: tuning-db/make-candidates.sh MODEL.json OUT [COUNT=16] [BUILD_DIR=build]
set -euo pipefail
model=${1:?usage: make-candidates.sh MODEL.json OUT [COUNT] [BUILD_DIR]}
out=${2:?usage: make-candidates.sh MODEL.json OUT [COUNT] [BUILD_DIR]}
count=${3:-16}
build=${4:-build}
dmc="$build/bin/dmc"
[ -x "$dmc" ] || { echo "make-candidates: $dmc not found (build first)" >&2; exit 1; }
[[ "$count" =~ ^[1-9][0-9]*$ ]] || { echo "make-candidates: COUNT must be a positive integer, got '$count'" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
samples=${DMC_REFERENCE_SAMPLES:-16384}
echo "make-candidates: $model: default configuration with references ($samples samples per output)"
"$dmc" compile "$model" -o "$out/default.dmlib" --reference --reference-samples "$samples" \
  > "$out/default.log" 2>&1 || { cat "$out/default.log" >&2; exit 1; }
for ((n = 0; n < count; n++)); do
  "$dmc" compile "$model" -o "$out/c$n.dmlib" --config-index "$n" > "$out/c$n.log" 2>&1 ||
    { cat "$out/c$n.log" >&2; exit 1; }
  rm -rf "$out/c$n.dmlib/reference" # (dmc compile leaves an empty one)
  cp -r "$out/default.dmlib/reference" "$out/c$n.dmlib/reference"
  echo "make-candidates: c$n ($(( n + 1 ))/$count)"
done
rm -f "$out"/*.log
{ echo "model: $model"; echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)"; } > "$out/SOURCE"
du -sh "$out"
