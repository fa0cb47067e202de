#!/usr/bin/env bash
# On a GPU machine, from the repository root, after run-device.sh's build
# (build-gpu/runtime/libdmrt.so, which python/dmc loads) and with
# gpu-bundles/train/ from tests/gpu/make-bundles.sh (--train-only makes just
# that): the training example and the data-parallel check, with dmc's layers.
#   examples/train.py --device-check   1000 steps next to PyTorch (final losses
#                                      within 2%), a dropout run, one step's
#                                      gradients against PyTorch; writes
#                                      OUT_DIR/train-loss.png, train-losses.json
#   tests/gpu/ddp_check.py (torchrun, 2 ranks)  NCCL, one GPU per rank: must
#                                      pass with 2+ GPUs and say SKIP with one;
#                                      then gloo with the ranks sharing GPUs
#                                      (runs on one GPU too): must pass
# Usage: tests/gpu/train-checks.sh OUT_DIR
# Exit status 0 only if every check above did what it must; otherwise 1,
# after a FAILED line per failure. Logs of the DDP runs: build-gpu/ddp-*.log.
set -o pipefail
out=${1:?usage: tests/gpu/train-checks.sh OUT_DIR}
export DMC_LIBDMRT=${DMC_LIBDMRT:-$PWD/build-gpu/runtime/libdmrt.so}
# NVLink multicast stays off (the lent machines require it: it can take a
# shared host's GPUs out of service); DDP needs none of it.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
status=0
bad() { echo "FAILED: $*"; status=1; }
[ -d gpu-bundles/train ] || { echo "FAILED: no gpu-bundles/train (run tests/gpu/make-bundles.sh)"; exit 1; }
[ -f "$DMC_LIBDMRT" ] || { echo "FAILED: no $DMC_LIBDMRT (build-gpu not built)"; exit 1; }
mkdir -p "$out" build-gpu

python3 examples/train.py --device-check --out "$out" || bad "examples/train.py: exit $?"

gpus=$(nvidia-smi -L | grep -c '^GPU')
ddp() { # BACKEND: torchrun with 2 ranks; the log in build-gpu/ddp-BACKEND.log
  local log=build-gpu/ddp-$1.log
  python3 -m torch.distributed.run --nproc_per_node=2 --master_addr 127.0.0.1 \
    --master_port 29517 tests/gpu/ddp_check.py --backend "$1" > "$log" 2>&1
  local rc=$?
  grep -E "(^|\]:)ddp_check:" "$log" || tail -20 "$log"
  return $rc
}
ddp nccl
rc=$?
if [ "$gpus" -ge 2 ]; then
  [ $rc -eq 0 ] && grep -qE "(^|\]:)ddp_check: PASS" build-gpu/ddp-nccl.log ||
    bad "ddp_check (nccl, $gpus GPUs): exit $rc, no PASS line"
else
  [ $rc -eq 0 ] && grep -qE "(^|\]:)ddp_check: SKIP" build-gpu/ddp-nccl.log ||
    bad "ddp_check (nccl, $gpus GPU): exit $rc, no SKIP line"
fi
ddp gloo
rc=$?
[ $rc -eq 0 ] && grep -qE "(^|\]:)ddp_check: PASS" build-gpu/ddp-gloo.log ||
  bad "ddp_check (gloo, ranks sharing $gpus GPU(s)): exit $rc, no PASS line"
[ $status -eq 0 ] && echo "train-checks: every check passed"
exit $status
