#!/usr/bin/env bash
# On a compiler machine: writes the bundles the GPU run (run-device.sh) needs
# into gpu-bundles/ (ignored by git; carried to the device):
#   gpu-bundles/small-*.dmlib        every example at a small size, default
#                                    configurations, with whole references
#                                    (every element checked; ctest -L gpu)
#   gpu-bundles/bert-large.dmlib     full size, with sampled references (65536
#                                    per output)
#   gpu-bundles/compare/bert-large-noepi.dmlib  the same, --no-epilogues (timed, not checked)
#   gpu-bundles/compare/{bert-large,gpt2-medium}-unfused-attention.dmlib and
#                                    gpu-bundles/compare/gpt2-medium.dmlib: with and
#                                    without fused attention (timed, not checked)
#   gpu-bundles/compare/bert-large-columns-apart.dmlib  --no-column-fusion: the
#                                    layer norms' parameter gradients in kernels
#                                    of their own (timed, not checked)
#   gpu-bundles/sweep/*.dmlib        bert-large under --config-index 0..7 and the
#                                    defaults, no references (timing sweep)
#   gpu-bundles/sweep-small/*.dmlib  two small examples under --config-index
#                                    0..7 with sampled references (odd
#                                    stride: every lane; every swept
#                                    configuration is checked, not only timed)
#   gpu-bundles/transposes/*.dmlib   a tiny bert-large with an inserted transpose
#                                    kernel under each tile and the strided loop
#                                    (tests/gpu/transpose_bundles.py), whole
#                                    references; transposes/timed/: the same at
#                                    full size, no references (timed)
#   gpu-bundles/wholestep/NAME.dmlib small bf16 encoders (dropout; dropout and
#                                    key padding) with NAME.storage.safetensors
#                                    (dmc eval --precision storage, seeded) and
#                                    NAME.fp64.safetensors (same inputs, fp64)
#                                    for the whole-step test (gpu.WholeStep,
#                                    through the C API) and dmc-run under
#                                    compute-sanitizer (run-device.sh)
#                                    and every example at the small size,
#                                    its dropout on (small-*)
#   gpu-bundles/torch/NAME-nodrop.{json,dmlib} bert-large and gpt2-medium at
#                                    full size without dropout: dmc-run's step
#                                    against PyTorch in fp32 (torch_check.py)
#   gpu-bundles/torch-module/        small bundles of the dmc.torch GPU tests
#                                    (make-torch-bundles.sh says which; ~4 MiB)
#   gpu-bundles/wholestep/other-arch/ encoder-dropout compiled for sm_80: the
#                                    runtime must refuse to open it on an
#                                    H100/H200 (DMRT_ERROR_ARCH)
#   gpu-bundles/train/encoder{,-dropout}.{json,dmlib}  the fp32 layer of
#                                    examples/train.py and tests/gpu/ddp_check.py
#                                    (examples/train/encoder.json), without
#                                    and with dropout 0.1, JSON beside bundle
#   gpu-bundles/bench/NAME.dmlib     every case of bench/cases/ at full size,
#                                    default configuration, no references
#                                    (~0.5 MiB each): dmc's side of the
#                                    benchmark (bench/run.py); SOURCE holds
#                                    the commit they were compiled at
#   gpu-bundles/bench-tuned/DB/NAME.dmlib  the same compiled with --db
#                                    tuning-db/DB.jsonl (NAME.tuning.txt: the
#                                    compile's report; DEVICE: the database's
#                                    GPU), the benchmark's dmc-tuned system
#   gpu-deps/                        the header-only dependencies the GPU
#                                    build needs and the device lacks
#                                    (nlohmann/json, copied from Debian's
#                                    nlohmann-json3-dev with its CMake config)
# Usage: tests/gpu/make-bundles.sh [BUILD_DIR=build] [--no-sweeps | --train-only]
#   --no-sweeps: leave out sweep/ and sweep-small/ (the knob sweeps, ~23 MiB),
#   for a run that checks the runtime and whole steps; everything together
#   exceeds the 64 MiB one device call carries. run-device.sh skips what is
#   absent.
#   --train-only: only gpu-bundles/train/ and gpu-deps/ (the rest of
#   gpu-bundles/ is kept), for a device call that runs just the training
#   example and the DDP check (well under 1 MiB).
set -euo pipefail
build=build sweeps=true train_only=false
for arg in "$@"; do
  case "$arg" in
    --no-sweeps) sweeps=false ;;
    --train-only) train_only=true ;;
    -*) echo "make-bundles: unknown option $arg (allowed: --no-sweeps, --train-only)" >&2; exit 2 ;;
    *) build=$arg ;;
  esac
done
dmc="$build/bin/dmc"
[ -x "$dmc" ] || { echo "make-bundles: $dmc not found (build first)" >&2; exit 1; }
out=gpu-bundles
models=$(mktemp -d)
trap 'rm -rf "$models"' EXIT
$train_only || rm -rf "$out"
rm -rf gpu-deps
mkdir -p gpu-deps/include gpu-deps/share/cmake
cp -r /usr/include/nlohmann gpu-deps/include/
cp -r /usr/share/cmake/nlohmann_json gpu-deps/share/cmake/

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

# The training example and the DDP check: examples/train/encoder.json (fp32,
# dropout off: compared with PyTorch) and the same with dropout 0.1 (the
# second run of examples/train.py); each JSON beside its bundle.
rm -rf "$out/train"
mkdir -p "$out/train"
cp examples/train/encoder.json "$out/train/encoder.json"
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
m.update(name=m["name"] + "_dropout", dropout=0.1)
json.dump(m, open(sys.argv[2], "w"), indent=1)' examples/train/encoder.json "$out/train/encoder-dropout.json"
for name in encoder encoder-dropout; do
  echo "make-bundles: train/$name"
  compile "$out/train/$name.json" "$out/train/$name.dmlib"
done
if $train_only; then
  du -sh "$out/train" gpu-deps
  exit 0
fi
mkdir -p "$out/wholestep" "$out/compare"
! $sweeps || mkdir -p "$out/sweep" "$out/sweep-small"
for m in "$models"/small-*.json; do
  echo "make-bundles: $(basename "$m" .json)"
  # Whole references (every output <= 262144 elements is stored whole), so
  # every element of every output is compared.
  compile "$m" "$out/$(basename "$m" .json).dmlib" --reference
done
echo "make-bundles: bert-large (full size, references)"
# 65536 samples per output (odd stride: every lane) keep the carried bundles
# under the device's 64 MiB.
compile examples/bert-large.json "$out/bert-large.dmlib" --reference --reference-samples 65536
echo "make-bundles: bert-large without cuBLASLt epilogues (the comparison for --bench)"
compile examples/bert-large.json "$out/compare/bert-large-noepi.dmlib" --no-epilogues
# Fused attention against the unfused path (dmc-run --bench on both, same run).
echo "make-bundles: bert-large and gpt2-medium with and without fused attention"
compile examples/bert-large.json "$out/compare/bert-large-unfused-attention.dmlib" --no-fused-attention
compile examples/gpt2-medium.json "$out/compare/gpt2-medium.dmlib"
compile examples/gpt2-medium.json "$out/compare/gpt2-medium-unfused-attention.dmlib" --no-fused-attention
# Column sums inside the layer norms' row kernels against apart (same run).
echo "make-bundles: bert-large with its column sums apart"
compile examples/bert-large.json "$out/compare/bert-large-columns-apart.dmlib" --no-column-fusion
$sweeps && for n in 0 1 2 3 4 5 6 7; do
  echo "make-bundles: sweep configuration $n"
  compile examples/bert-large.json "$out/sweep/bert-large-c$n.dmlib" --config-index "$n"
  for s in small-bert-large small-transformer-big-decoder; do
    compile "$models/$s.json" "$out/sweep-small/$s-c$n.dmlib" --config-index "$n" --reference --reference-samples 2048
  done
done
$sweeps && compile examples/bert-large.json "$out/sweep/bert-large-default.dmlib"

# Inserted transposes, tiled through shared memory and as the strided loop.
echo "make-bundles: transposes"
python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
m.update(name="tiny-bert-large", batch=2, seq=64, hidden=64, heads=2, ffn=128)
json.dump(m, open(sys.argv[2], "w"))' examples/bert-large.json "$models/tiny-bert-large.json"
python3 tests/gpu/transpose_bundles.py "$dmc" "$models/tiny-bert-large.json" "$out/transposes" --reference
python3 tests/gpu/transpose_bundles.py "$dmc" examples/bert-large.json "$out/transposes/timed"

# Whole training steps (tests/gpu/WholeStepTest.cpp): bundle, storage-precision
# interpreter run of the fused graph (its seed is the dropout seed) and the
# same inputs in fp64 (the noise floor of the comparison).
wholestep() { # NAME SEED JSON|@FILE [LENGTHS: comma-separated key lengths]
  local name=$1 seed=$2 dest="$out/wholestep/$1" inputs=()
  case "$3" in
    @*) [ "${3#@}" -ef "$models/$name.json" ] || cp "${3#@}" "$models/$name.json" ;;
    *) echo "$3" > "$models/$name.json" ;;
  esac
  echo "make-bundles: whole step $name"
  compile "$models/$name.json" "$dest.dmlib"
  if [ -n "${4:-}" ]; then # chosen lengths (0: a fully masked row), the rest drawn
    PYTHONPATH=tests/oracle "${DMC_PYTHON:-/usr/bin/python3}" -c "import sys, numpy as np, safetensors_io as io
io.write_safetensors(sys.argv[1], {'lengths': np.array(sys.argv[2].split(','), dtype=np.int32)})" \
      "$models/$name.lengths.safetensors" "$4"
    inputs=(--inputs "$models/$name.lengths.safetensors")
  fi
  "$dmc" eval "$models/$name.json" --train --stage config --precision storage --seed "$seed" \
    "${inputs[@]}" --out "$dest.storage.safetensors"
  "$dmc" eval "$models/$name.json" --train --stage config --precision f64 --seed "$seed" \
    --inputs "$dest.storage.safetensors" --out "$dest.fp64.safetensors"
}
wholestep encoder-dropout 7 '{"kind": "encoder", "name": "ws_encoder", "batch": 4, "seq": 64,
  "hidden": 64, "heads": 4, "ffn": 128, "dropout": 0.1, "dtype": "bf16"}'
# Lengths 64, 37, 0, 12: unmasked, partly masked and fully masked rows
# (a fully masked row's attention weights are zero: examples/README.md).
wholestep encoder-padding 8 '{"kind": "encoder", "name": "ws_encoder_padding", "batch": 4,
  "seq": 64, "hidden": 64, "heads": 4, "ffn": 128, "dropout": 0.1, "key_padding": true,
  "dtype": "bf16"}' 64,37,0,12
# Every example at the small size above, its own dropout on (masks drawn from
# seeds 21, 22, ...), the whole step against the interpreter.
seed=21
for m in "$models"/small-*.json; do
  wholestep "$(basename "$m" .json)" "$seed" "@$m"
  seed=$((seed + 1))
done
# The decoder (two stacks: self-attention's Q, K, V and cross-attention's K, V
# gradients) with its stacks written in place (dm-stack-in-place, strided
# views): the same interpreter runs, as the pass changes no result.
name=small-transformer-big-decoder
echo "make-bundles: whole step $name-inplace"
compile "$models/$name.json" "$out/wholestep/$name-inplace.dmlib" --stack-in-place
cp "$out/wholestep/$name.storage.safetensors" "$out/wholestep/$name-inplace.storage.safetensors"
cp "$out/wholestep/$name.fp64.safetensors" "$out/wholestep/$name-inplace.fp64.safetensors"
# Full size, dropout off: bert-large and gpt2-medium for the check against
# PyTorch autograd in fp32 on the GPU (run-device.sh: dmc-run --train, then
# tests/gpu/torch_check.py); each model JSON travels beside its bundle.
mkdir -p "$out/torch"
for name in bert-large gpt2-medium; do
  python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))
m.update(name=m["name"] + "-nodrop", dropout=0.0)
json.dump(m, open(sys.argv[2], "w"), indent=1)' "examples/$name.json" "$out/torch/$name-nodrop.json"
  echo "make-bundles: $name without dropout (PyTorch check)"
  compile "$out/torch/$name-nodrop.json" "$out/torch/$name-nodrop.dmlib"
done
# The same layer for another arch: opening it on the GPU must fail cleanly.
mkdir -p "$out/wholestep/other-arch"
compile "$models/encoder-dropout.json" "$out/wholestep/other-arch/encoder-dropout-sm80.dmlib" \
  --arch sm_80
# dmc.torch (python/dmc): HF comparisons, dropout statistics, the module.
"$(dirname "$0")/make-torch-bundles.sh" "$build"
# The benchmark's cases (bench/run.py), as the default compile makes them; no
# --reference, to keep the carried size small.
mkdir -p "$out/bench"
for m in bench/cases/*.json; do
  echo "make-bundles: bench $(basename "$m" .json)"
  compile "$m" "$out/bench/$(basename "$m" .json).dmlib"
done
# The same with each committed tuning database (dmc compile --db): the
# benchmark's dmc-tuned system runs the set whose DEVICE names the GPU; the
# compile's report (records matched, kernels measured and changed) beside.
for db in tuning-db/*.jsonl; do
  stem=$(basename "$db" .jsonl)
  dir="$out/bench-tuned/$stem"
  mkdir -p "$dir"
  for m in bench/cases/*.json; do
    name=$(basename "$m" .json)
    echo "make-bundles: bench $name tuned with $db"
    "$dmc" compile "$m" -o "$dir/$name.dmlib" --db "$db" > "$dir/$name.tuning.txt" 2>&1 ||
      { cat "$dir/$name.tuning.txt" >&2; exit 1; }
  done
  # "dmc compile: tuning-db/h200.jsonl for NVIDIA H200 (9.0), ...": the device.
  sed -n 's/^dmc compile: .* for \(.*\) ([0-9.]*), .*/\1/p' "$dir/$name.tuning.txt" | head -1 \
    > "$dir/DEVICE"
  [ -s "$dir/DEVICE" ] || { echo "make-bundles: no device named in $dir/$name.tuning.txt" >&2; exit 1; }
done
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD -- 2>/dev/null || commit="$commit+dirty"
echo "$commit" > "$out/bench/SOURCE"
du -sh "$out" gpu-deps  # the device run carries at most 64 MiB
