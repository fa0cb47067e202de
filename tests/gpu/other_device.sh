#!/bin/sh
# dmc-run on the host's last GPU: the runtime leaves the caller's current device
# as it found it, so the tool makes the layer's device current before it
# allocates and copies. The training step there must give GPU 0's results bit for
# bit (every kernel is deterministic); a run with another dropout seed must not
# (the comparison can fail); the benchmark must run there. Exit 77 with one GPU.
# Usage: other_device.sh DMC_RUN BUNDLE INPUTS OUTDIR
run=$1 bundle=$2 inputs=$3 dir=$4
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$n" -ge 2 ] || { echo "other_device: skipped: $n GPU(s), needs 2"; exit 77; }
last=$((n - 1))
mkdir -p "$dir"
"$run" "$bundle" --train --inputs "$inputs" --out "$dir/gpu0.safetensors" --device 0 ||
  { echo "other_device: FAIL: dmc-run on GPU 0: exit $?"; exit 1; }
"$run" "$bundle" --train --inputs "$inputs" --out "$dir/gpu$last.safetensors" --device "$last" ||
  { echo "other_device: FAIL: dmc-run --device $last: exit $?"; exit 1; }
cmp -s "$dir/gpu0.safetensors" "$dir/gpu$last.safetensors" ||
  { echo "other_device: FAIL: GPU $last's results differ from GPU 0's"; exit 1; }
"$run" "$bundle" --train --inputs "$inputs" --out "$dir/planted.safetensors" --device "$last" \
  --seed 6 || { echo "other_device: FAIL: dmc-run --seed 6: exit $?"; exit 1; }
if cmp -s "$dir/gpu0.safetensors" "$dir/planted.safetensors"; then
  echo "other_device: FAIL: another dropout seed gave the same results (the comparison cannot fail)"
  exit 1
fi
"$run" "$bundle" --bench --reps 5 --warmup 2 --device "$last" ||
  { echo "other_device: FAIL: dmc-run --bench --device $last: exit $?"; exit 1; }
echo "other_device: PASS: GPU $last gives GPU 0's results bit for bit; another seed differs"
