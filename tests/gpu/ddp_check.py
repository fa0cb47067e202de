#!/usr/bin/env python3
"""dmc's layers under torch.nn.parallel.DistributedDataParallel: one step's gradients on
N ranks against the single-process gradients of the concatenated batch.

Usage (repository root; bundles from tests/gpu/make-bundles.sh):
  torchrun --nproc_per_node=2 tests/gpu/ddp_check.py              # NCCL, one GPU per rank
  torchrun --nproc_per_node=2 tests/gpu/ddp_check.py --backend gloo  # ranks may share a GPU
  torchrun --nproc_per_node=2 tests/gpu/ddp_check.py --cpu        # reference layers, gloo (CI)

The model is examples/train.py's (examples/train_model.py: embedding, 4 encoder layers
from the bundle, classifier; dropout off). Rank r trains on rows [rB, (r+1)B) of one
batch of N*B sequences (B is compiled into the bundle). The reference runs the same
bundle in one process over each rank's rows in turn, with the same weights, and
averages those N gradients. That is the gradient of the concatenated batch: its loss
is the mean over N*B*seq tokens, i.e. the mean of the N per-rank mean losses (each
rank has as many tokens), and no operation mixes sequences (layer norms act per token,
attention within a sequence), so d(loss)/dw = (1/N) sum_r d(loss_r)/dw, which is what
DDP's all-reduce (sum of gradients divided by N) computes. With reference layers (any
batch size) the direct gradient of the concatenated batch is checked against that
average too. Every rank's gradients must match the average within RTOL x max |ref| per
tensor (rounding of the reduction order and of atomics only); the per-rank gradients
must differ from it by far more (else the comparison could not see a missing
all-reduce). A planted fault (rank 1 scales its gradient buckets by 1.01 before the
all-reduce, in a DDP communication hook) must then fail the same comparison.

Exit status: 0 on PASS or SKIP (NCCL with fewer GPUs than ranks, or no GPU: a `SKIP`
line says why), 1 on FAIL, 2 on a usage error.
"""

import argparse
import datetime
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(1, os.path.join(ROOT, "python"))  # the dmc package, if not installed

import train_model as tm  # noqa: E402

RTOL = {"f32": 1e-5, "bf16": 1e-2, "f16": 1e-3}  # per tensor, of max |reference|
SPREAD = 100  # per-rank gradients must differ from the average by SPREAD x RTOL somewhere
PLANTED_SCALE = 1.01


def say(*text):
    if int(os.environ.get("RANK", "0")) == 0:
        print("ddp_check:", *text, flush=True)


def gradients(model):
    return {n: p.grad.detach().float().clone() for n, p in model.named_parameters()}


def step(model, tokens, targets, scale=1.0):
    model.zero_grad(set_to_none=True)
    (tm.loss_of(model, tokens, targets) * scale).backward()
    return gradients(model)


def errors(got, want):
    """{name: max |got - want| / scale} (train_model.gradient_errors: the key bias, zero
    by construction, on the query bias's scale)."""
    return {name: err / scale if scale > 0 else float("inf")
            for name, (err, scale) in tm.gradient_errors(got, want).items()}


def scaled_allreduce(rank, world):
    """A DDP communication hook: DDP's mean all-reduce, with rank 1's buckets scaled."""

    def hook(state, bucket):
        tensor = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
        if rank == 1:
            tensor.mul_(PLANTED_SCALE)
        tensor.div_(world)
        future = dist.all_reduce(tensor, async_op=True).get_future()
        return future.then(lambda f: f.value()[0])

    return hook


def ddp_gradients(base, build, device, tokens, targets, hook=None):
    model = build()
    tm.copy_weights(base, model)
    ddp = DistributedDataParallel(model, device_ids=[device] if device.type == "cuda" else None)
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    ddp.zero_grad(set_to_none=True)
    tm.loss_of(ddp, tokens, targets).backward()
    return gradients(ddp.module)


def count_failures(errs, rtol, device):
    """Tensors out of bound on this rank, summed over all ranks (every rank gets the sum)."""
    bad = torch.tensor([sum(1 for e in errs.values() if not e <= rtol)], device=device)
    dist.all_reduce(bad)
    return int(bad.item())


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=os.path.join(ROOT, "examples", "train", "encoder.json"))
    parser.add_argument("--bundle", default="gpu-bundles/train/encoder.dmlib")
    parser.add_argument("--backend", choices=("nccl", "gloo"), default=None,
                        help="default: nccl on GPUs, gloo with --cpu")
    parser.add_argument("--cpu", action="store_true",
                        help="CPU ranks with the PyTorch reference layers (gloo)")
    args = parser.parse_args(argv)
    args.backend = args.backend or ("gloo" if args.cpu else "nccl")
    if args.cpu and args.backend != "gloo":
        parser.error("--cpu needs the gloo backend")
    return args


def main(argv=None):
    args = parse(argv)
    if "WORLD_SIZE" not in os.environ:
        print("ddp_check: start it with torchrun --nproc_per_node=2 (no WORLD_SIZE)", file=sys.stderr)
        return 2
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", rank))
    gpus = 0 if args.cpu else torch.cuda.device_count()
    if world < 2:
        print("ddp_check: needs 2 or more ranks (torchrun --nproc_per_node=2)", file=sys.stderr)
        return 2
    if not args.cpu and gpus == 0:
        say(f"SKIP: no GPU visible to PyTorch ({args.backend}; --cpu checks the reference layers)")
        return 0
    if args.backend == "nccl" and gpus < world:
        say(f"SKIP: NCCL needs one GPU per rank: {world} ranks, {gpus} GPU(s) "
            f"(--backend gloo runs the ranks on shared GPUs)")
        return 0
    spec = tm.Spec(args.model)
    if spec.dropout != 0:
        say(f"{args.model} has dropout {spec.dropout:g}: the gradients would not be comparable")
        return 2
    device = torch.device("cpu") if args.cpu else torch.device("cuda", local % gpus)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = False
    dist.init_process_group(args.backend, timeout=datetime.timedelta(seconds=300))
    try:
        return check(args, spec, rank, world, device)
    finally:
        dist.destroy_process_group()


def check(args, spec, rank, world, device):
    bundle = None if args.cpu else args.bundle

    def build():
        return tm.build(spec, device, bundle)

    where = "CPU" if args.cpu else f"{torch.cuda.get_device_name(device)}, {torch.cuda.device_count()} GPU(s)"
    say(f"{world} ranks, {args.backend}, {where}; layers: {bundle or 'PyTorch reference'}; "
        f"batch {spec.batch} per rank, seq {spec.seq}, {spec.dtype_name}")
    base = build()
    tm.initialize(base, seed=11)
    tokens, targets = tm.make_batch(torch.Generator().manual_seed(5), world * spec.batch,
                                    spec.seq, device)
    rows = [slice(r * spec.batch, (r + 1) * spec.batch) for r in range(world)]
    rtol = RTOL[spec.dtype_name]

    # The single-process reference: each rank's rows in turn, gradients averaged.
    single = build()
    tm.copy_weights(base, single)
    per_rank = [step(single, tokens[s], targets[s]) for s in rows]
    average = {n: sum(g[n] for g in per_rank) / world for n in per_rank[0]}
    spread = max(errors(per_rank[rank], average).values())
    ok = spread > SPREAD * rtol
    say(f"rank gradients differ from their average by up to {spread:.2e} x max |avg| "
        f"(needs > {SPREAD * rtol:g}, else a missing all-reduce would pass): "
        + ("ok" if ok else "FAIL"))
    if bundle is None:  # reference layers take any batch: the concatenated batch directly
        direct = errors(average, step(single, tokens, targets))
        worst = max(direct.values())
        ok_direct = worst <= rtol
        ok = ok and ok_direct
        say(f"average of per-rank gradients = gradient of the concatenated batch ({world * spec.batch} "
            f"sequences): worst {worst:.2e} (bound {rtol:g}): {'PASS' if ok_direct else 'FAIL'}")

    errs = errors(ddp_gradients(base, build, device, tokens[rows[rank]], targets[rows[rank]]),
                  average)
    failing = count_failures(errs, rtol, device)
    if rank == 0:  # every tensor out of bound, else the three largest errors
        shown = [n for n, e in errs.items() if not e <= rtol] or sorted(errs, key=errs.get)[-3:]
        for name in shown:
            print(f"ddp_check:   {name:<28} {errs[name]:.2e}{'' if errs[name] <= rtol else '  FAIL'}")
    say(f"DDP gradients, {len(errs)} tensors on each of {world} ranks, worst on rank 0 "
        f"{max(errs.values()):.2e} (bound {rtol:g} x max |ref|): "
        + ("PASS" if failing == 0 else f"FAIL ({failing} tensor(s) over all ranks)"))
    ok = ok and failing == 0

    planted = errors(ddp_gradients(base, build, device, tokens[rows[rank]], targets[rows[rank]],
                                   scaled_allreduce(rank, world)), average)
    caught = count_failures(planted, rtol, device)
    say(f"planted fault (rank 1's gradient buckets x{PLANTED_SCALE} before the all-reduce): "
        + (f"caught ({caught} tensor(s) over all ranks out of bound)" if caught else "NOT caught"))
    ok = ok and caught > 0
    ranks_failed = count_failures({"verdict": 0.0 if ok else 1.0}, 0.5, device)
    say("PASS" if ranks_failed == 0 else f"FAIL (on {ranks_failed} rank(s))")
    return 0 if ranks_failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
