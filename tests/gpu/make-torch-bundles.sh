#!/usr/bin/env bash
# Called by make-bundles.sh (or alone: tests/gpu/make-torch-bundles.sh [BUILD_DIR]):
# writes gpu-bundles/torch-module/, the bundles of the dmc.torch GPU tests
# (tests/gpu/torch_module_check.py, registered in tests/gpu/CMakeLists.txt), all small:
#   hf-bert-{f32,bf16}.dmlib   tests/gpu/models/torch-module/hf-bert.json (BertLayer)
#   hf-gpt2-{f32,bf16}.dmlib   .../hf-gpt2.json (GPT2Block)
#   dropout-f32.dmlib          .../dropout.json (dropout statistics)
#   dropout-off-f32.dmlib      the same with "dropout": 0 (its eval_bundle)
#   stack-f32.dmlib            .../stack.json (a two-layer decoder: dmc.torch.Stack)
#   tiny-sm80.dmlib            tests/lit/dmc/Inputs/tiny-encoder.json for sm_80: opening
#                              it on an H100/H200 must raise DMRT_ERROR_ARCH
set -euo pipefail
build=${1:-build}
dmc="$build/bin/dmc"
[ -x "$dmc" ] || { echo "make-torch-bundles: $dmc not found (build first)" >&2; exit 1; }
out=gpu-bundles/torch-module
src=tests/gpu/models/torch-module
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$out"
mkdir -p "$out"
variant() { # SRC DEST KEY=JSON...: SRC with fields replaced
  local from=$1 to=$2
  shift 2
  "${DMC_PYTHON:-/usr/bin/python3}" - "$from" "$to" "$@" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for kv in sys.argv[3:]:
    k, v = kv.split("=", 1)
    m[k] = json.loads(v)
json.dump(m, open(sys.argv[2], "w"))
PY
}
compile() { # MODEL OUT [ARGS...]
  local model=$1 dest=$2
  shift 2
  echo "make-torch-bundles: $(basename "$dest")"
  "$dmc" compile "$model" -o "$dest" "$@" > "$tmp/log" 2>&1 || { cat "$tmp/log" >&2; exit 1; }
}
for m in hf-bert hf-gpt2; do
  for t in f32 bf16; do
    variant "$src/$m.json" "$tmp/$m-$t.json" "dtype=\"$t\""
    compile "$tmp/$m-$t.json" "$out/$m-$t.dmlib"
  done
done
compile "$src/dropout.json" "$out/dropout-f32.dmlib"
variant "$src/dropout.json" "$tmp/dropout-off.json" "dropout=0"
compile "$tmp/dropout-off.json" "$out/dropout-off-f32.dmlib"
compile "$src/stack.json" "$out/stack-f32.dmlib"
compile tests/lit/dmc/Inputs/tiny-encoder.json "$out/tiny-sm80.dmlib" --arch sm_80
du -sh "$out"
