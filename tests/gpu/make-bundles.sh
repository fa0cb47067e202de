#!/usr/bin/env bash
# On a compiler machine: writes the bundles the GPU run (run-device.sh) needs
# into gpu-bundles/ (ignored by git; carried to the device):
#   gpu-bundles/small-*.dmlib        every example at a small size, default
#                                    configurations, with whole references
#                                    (every element checked; ctest -L gpu)
#   gpu-bundles/bert-large.dmlib     full size, with (sampled) references
#   gpu-bundles/sweep/*.dmlib        bert-large under --config-index 0..7 and the
#                                    defaults, no references (timing sweep)
#   gpu-bundles/sweep-small/*.dmlib  two small examples under --config-index
#                                    0..7 with sampled references (odd
#                                    stride: every lane; every swept
#                                    configuration is checked, not only timed)
# Usage: tests/gpu/make-bundles.sh [BUILD_DIR=build]
set -euo pipefail
build=${1:-build}
dmc="$build/bin/dmc"
[ -x "$dmc" ] || { echo "make-bundles: $dmc not found (build first)" >&2; exit 1; }
out=gpu-bundles
models=$(mktemp -d)
trap 'rm -rf "$models"' EXIT
rm -rf "$out"
mkdir -p "$out/sweep" "$out/sweep-small"

# Small variants: 256 token rows (so column reductions split across blocks),
# hidden 64, 4 heads, FFN 128, memory 24 for decoders.
for f in examples/*.json; do
  name=$(basename "$f" .json)
  python3 - "$f" "$models/small-$name.json" <<'EOF'
import json, sys
m = json.load(open(sys.argv[1]))
m.update(name="small-" + m.get("name", "model"), batch=4, seq=64, hidden=64, heads=4, ffn=128)
m.pop("head_dim", None)
if "memory_seq" in m:
    m["memory_seq"] = 24
json.dump(m, open(sys.argv[2], "w"))
EOF
done

compile() { # MODEL OUT [ARGS...]
  local model=$1 dest=$2
  shift 2
  "$dmc" compile "$model" -o "$dest" "$@" > "$dest.log" 2>&1 ||
    { cat "$dest.log" >&2; exit 1; }
  rm -f "$dest.log"
}
for m in "$models"/small-*.json; do
  echo "make-bundles: $(basename "$m" .json)"
  # Whole references (every output <= 262144 elements is stored whole), so
  # every element of every output is compared.
  compile "$m" "$out/$(basename "$m" .json).dmlib" --reference
done
echo "make-bundles: bert-large (full size, references)"
compile examples/bert-large.json "$out/bert-large.dmlib" --reference
for n in 0 1 2 3 4 5 6 7; do
  echo "make-bundles: sweep configuration $n"
  compile examples/bert-large.json "$out/sweep/bert-large-c$n.dmlib" --config-index "$n"
  for s in small-bert-large small-transformer-big-decoder; do
    compile "$models/$s.json" "$out/sweep-small/$s-c$n.dmlib" --config-index "$n" --reference --reference-samples 2048
  done
done
compile examples/bert-large.json "$out/sweep/bert-large-default.dmlib"
du -sh "$out"  # the device run carries at most 64 MiB
