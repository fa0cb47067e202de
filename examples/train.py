#!/usr/bin/env python3
"""Trains a small model whose 4 encoder layers are dmc's compiled layer, next to the same
model with plain-PyTorch layers, and compares their loss curves.

The model and the task (noisy sequence reversal, a known loss floor) are described in
examples/train_model.py; the layer in examples/train/encoder.json (fp32, batch and
sequence length compiled in). Both models start from the same weights (state dicts
copied) and see the same batches; dropout is off for the comparison. The final loss
(mean of the last 50 steps) of dmc's model must be within 2% of PyTorch's, and both must
have learned (at least halfway from the first loss to the floor). A second run with
dropout on (the bundle compiled with it) must learn as well. A PNG of every curve and
a JSON of every loss go to --out.

Usage (on a GPU machine; bundles made by tests/gpu/make-bundles.sh):
  python3 examples/train.py [--steps 1000] [--out DIR] [--dropout 0.1] [--device-check]
  python3 examples/train.py --reference-only --cpu --steps 3 --no-plot   # CPU smoke test
Prints one summary line per check and a last line `train: PASS` or `train: FAIL ...`;
exits 0 on PASS, 1 on FAIL, 2 on a usage error.
"""

import argparse
import json
import math
import os
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.join(HERE, "..", "python"))  # the dmc package, if not installed

import train_model as tm  # noqa: E402

TOLERANCE = 0.02  # relative difference of the final losses
WINDOW = 50  # steps averaged into a final loss
JUDGE_STEPS = 500  # fewer steps than this: too early to say whether a run learned
GRAD_RTOL = {"f32": 1e-3, "bf16": 2e-2, "f16": 1e-2}  # --device-check, per tensor
PLANTED_SCALE = 1.05  # --device-check: one dmc gradient scaled, which must be caught


def train(model, steps, lr, spec, device, data_seed=1):
    """Adam at `lr` for `steps` steps; returns (per-step losses, wall seconds)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    generator = torch.Generator().manual_seed(data_seed)
    losses = torch.empty(steps, device=device)
    start = time.perf_counter()
    for step in range(steps):
        tokens, targets = tm.make_batch(generator, spec.batch, spec.seq, device)
        optimizer.zero_grad(set_to_none=True)
        loss = tm.loss_of(model, tokens, targets)
        loss.backward()
        optimizer.step()
        losses[step] = loss.detach()
    values = losses.tolist()  # one synchronisation, at the end
    return values, time.perf_counter() - start


def final(losses):
    window = losses[-WINDOW:]
    return sum(window) / len(window)


def learned(losses):
    """(verdict, first loss): the final loss at least halfway from the first to the floor."""
    first = sum(losses[:10]) / len(losses[:10])
    return final(losses) <= first - 0.5 * (first - tm.bayes_loss()), first


def eval_loss(model, spec, device, batches=8):
    """Loss with dropout off (model.eval()) on fresh batches."""
    model.eval()
    generator = torch.Generator().manual_seed(12345)
    with torch.no_grad():
        total = sum(tm.loss_of(model, *tm.make_batch(generator, spec.batch, spec.seq, device)).item()
                    for _ in range(batches))
    model.train()
    return total / batches


def grads_of(model, tokens, targets):
    model.zero_grad(set_to_none=True)
    loss = tm.loss_of(model, tokens, targets)
    loss.backward()
    return loss.item(), {n: p.grad.detach().float().clone() for n, p in model.named_parameters()}


def compare_grads(got, want, rtol):
    """{name: message} for every gradient whose max |got - want| exceeds rtol x its scale
    (train_model.gradient_errors) or is not finite."""
    return {name: f"{name} ({err:.2e} > {rtol:g} x {scale:.2e})"
            for name, (err, scale) in tm.gradient_errors(got, want).items()
            if not (math.isfinite(err) and err <= rtol * scale)}


def device_check(spec, bundle, device):
    """One step of the dmc model against the reference model: loss and every gradient
    from the same weights and batch; then a planted fault that the check must catch."""
    reference = tm.build(spec, device)
    tm.initialize(reference, seed=7)
    compiled = tm.build(spec, device, bundle)
    tm.copy_weights(reference, compiled)
    tokens, targets = tm.make_batch(torch.Generator().manual_seed(3), spec.batch, spec.seq, device)
    loss_ref, want = grads_of(reference, tokens, targets)
    loss_dmc, got = grads_of(compiled, tokens, targets)
    rtol = GRAD_RTOL[spec.dtype_name]
    loss_rel = abs(loss_dmc - loss_ref) / abs(loss_ref)
    bad = compare_grads(got, want, rtol)
    ok = loss_rel <= rtol and not bad
    print(f"train: device check: loss dmc {loss_dmc:.6f} PyTorch {loss_ref:.6f} (rel {loss_rel:.2e}); "
          f"{len(want) - len(bad)} of {len(want)} gradients within {rtol:g} x max |ref|: "
          f"{'PASS' if ok else 'FAIL'}")
    for line in list(bad.values())[:10]:
        print(f"train:   FAIL {line}")
    planted_name = "layers.1.attn.wq"
    planted = dict(got, **{planted_name: got[planted_name] * PLANTED_SCALE})
    caught = planted_name in compare_grads(planted, want, rtol)
    print(f"train: device check, planted fault ({planted_name} gradient x{PLANTED_SCALE}): "
          f"{'caught' if caught else 'NOT caught'}")
    return ok and caught


def run_pair(spec, bundle, device, args, eval_bundle=None):
    """Trains the reference model and (unless --reference-only) the dmc model from the
    same initial weights; returns {label: losses} (and "... eval": [eval_loss])."""
    torch.manual_seed(args.seed)
    reference = tm.build(spec, device)
    tm.initialize(reference, seed=args.seed)
    curves = {}
    if bundle is not None:
        compiled = tm.build(spec, device, bundle, eval_bundle)
        tm.copy_weights(reference, compiled)
        curves["dmc"], seconds = train(compiled, args.steps, args.lr, spec, device)
        print(f"train: dmc {spec.dtype_name} dropout {spec.dropout:g}: {args.steps} steps "
              f"in {seconds:.1f} s")
        curves["dmc eval"] = [eval_loss(compiled, spec, device)]
    curves["PyTorch"], seconds = train(reference, args.steps, args.lr, spec, device)
    print(f"train: PyTorch reference dropout {spec.dropout:g}: {args.steps} steps in {seconds:.1f} s")
    curves["PyTorch eval"] = [eval_loss(reference, spec, device)]
    return curves


def plot(runs, path, steps):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for (label, losses), color in zip(runs.items(), ("C0", "C1", "C2", "C3")):
        smooth = [sum(losses[max(0, i - 19):i + 1]) / len(losses[max(0, i - 19):i + 1])
                  for i in range(len(losses))]
        style = "--" if label.startswith("PyTorch") else "-"  # overlapping curves stay visible
        ax.plot(losses, color=color, alpha=0.2, linewidth=0.8)
        ax.plot(smooth, color=color, linestyle=style, label=f"{label} (final {final(losses):.4f})")
    ax.axhline(tm.bayes_loss(), color="gray", linestyle="--", label=f"task floor {tm.bayes_loss():.4f}")
    ax.axhline(math.log(tm.VOCAB), color="gray", linestyle=":", label=f"ln {tm.VOCAB} (no attention)")
    ax.set(xlabel="step", ylabel="cross-entropy (nats/token)", xlim=(0, steps),
           title="noisy reversal, 4 encoder layers: dmc vs PyTorch (20-step mean, raw faint)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def judge(curves, steps, label):
    """Prints and returns (ok, record) for one run: finite, sane start, learned."""
    losses = curves[label]
    ok = all(math.isfinite(v) for v in losses)
    first = losses[0]
    sane = abs(first - math.log(tm.VOCAB)) <= 0.1 * math.log(tm.VOCAB)
    verdict, start = learned(losses)
    judged = steps >= JUDGE_STEPS
    ok = ok and sane and (verdict or not judged)
    print(f"train: {label}: loss {start:.4f} -> {final(losses):.4f} (floor {tm.bayes_loss():.4f}, "
          f"first step {first:.4f}, ln {tm.VOCAB} = {math.log(tm.VOCAB):.4f}): "
          + ("not finite " if not all(math.isfinite(v) for v in losses) else "")
          + ("" if sane else "first loss is not ~ln(vocab) ")
          + (("learned" if verdict else "did NOT learn") if judged else
             f"(under {JUDGE_STEPS} steps: learning not judged)"))
    return ok


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--out", default="train-out", help="folder for the PNG and the losses")
    parser.add_argument("--dropout", type=float, default=0.1,
                        help="dropout of the second run (0: no second run); the bundle "
                             "BUNDLES/encoder-dropout.dmlib must be compiled with it")
    parser.add_argument("--device-check", action="store_true",
                        help="first compare one step's loss and gradients with PyTorch's")
    parser.add_argument("--model", default=os.path.join(HERE, "train", "encoder.json"))
    parser.add_argument("--bundles", default="gpu-bundles/train",
                        help="folder with encoder.dmlib and encoder-dropout.{dmlib,json}")
    parser.add_argument("--reference-only", action="store_true",
                        help="train only the PyTorch reference (no bundles, no comparison)")
    parser.add_argument("--cpu", action="store_true", help="run on the CPU (with --reference-only)")
    parser.add_argument("--no-plot", action="store_true", help="write no PNG (no matplotlib)")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0, help="initial weights and dropout seeds")
    args = parser.parse_args(argv)
    if args.steps < 1 or not 0.0 <= args.dropout < 1.0:
        parser.error("--steps must be >= 1 and --dropout in [0, 1)")
    return args


def main(argv=None):
    args = parse(argv)
    try:
        spec = tm.Spec(args.model)
    except (OSError, ValueError) as e:
        print(f"train: {e}", file=sys.stderr)
        return 2
    if args.cpu:
        device = torch.device("cpu")
    elif not torch.cuda.is_available():
        print("train: no CUDA device (use --reference-only --cpu for the CPU smoke test)",
              file=sys.stderr)
        return 2
    else:
        device = torch.device("cuda", torch.cuda.current_device())
        torch.backends.cuda.matmul.allow_tf32 = False  # an fp32 reference that is fp32
        print(f"train: {torch.cuda.get_device_name(device)}, PyTorch {torch.__version__}")
    bundle = None if args.reference_only else os.path.join(args.bundles, "encoder.dmlib")
    dropout_spec = None
    try:  # bundles that disagree with their descriptions are usage errors, found first
        if bundle is not None:
            spec.check_bundle(bundle)
        if args.dropout > 0 and bundle is not None:
            dropout_spec = tm.Spec(os.path.join(args.bundles, "encoder-dropout.json"))
            dropout_spec.check_bundle(os.path.join(args.bundles, "encoder-dropout.dmlib"))
    except (OSError, ValueError) as e:
        print(f"train: {e}", file=sys.stderr)
        return 2
    if dropout_spec is not None and abs(dropout_spec.dropout - args.dropout) > 1e-9:
        print(f"train: {dropout_spec.path} has dropout {dropout_spec.dropout:g}, not --dropout "
              f"{args.dropout:g} (make-bundles.sh compiles it)", file=sys.stderr)
        return 2
    if spec.dropout != 0:
        print(f"train: {spec.path} has dropout {spec.dropout:g}; the comparison needs 0",
              file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    failures = []
    if args.device_check and not args.reference_only and not device_check(spec, bundle, device):
        failures.append("device check")

    curves = run_pair(spec, bundle, device, args)
    runs = {"dmc": curves.get("dmc"), "PyTorch": curves["PyTorch"]}
    for label in [k for k, v in runs.items() if v is not None]:
        if not judge(runs, args.steps, label):
            failures.append(label)
    summary = {"steps": args.steps, "window": WINDOW, "floor": tm.bayes_loss(),
               "eval": {k: v[0] for k, v in curves.items() if k.endswith("eval")}}
    if bundle is not None:
        ours, theirs = final(runs["dmc"]), final(runs["PyTorch"])
        rel = abs(ours - theirs) / theirs
        verdict = rel <= TOLERANCE
        failures += [] if verdict else ["final losses differ"]
        summary.update(dmc=ours, pytorch=theirs, relative=rel)
        print(f"train: final loss (mean of last {min(WINDOW, args.steps)} of {args.steps} steps, "
              f"dropout off): dmc {ours:.5f}, PyTorch {theirs:.5f}, relative difference "
              f"{100 * rel:.2f}% (limit {100 * TOLERANCE:g}%): {'PASS' if verdict else 'FAIL'}")
    if dropout_spec is not None:
        drop = run_pair(dropout_spec, os.path.join(args.bundles, "encoder-dropout.dmlib"),
                        device, args, eval_bundle=bundle)
        label_dmc, label_ref = f"dmc dropout {args.dropout:g}", f"PyTorch dropout {args.dropout:g}"
        runs[label_dmc], runs[label_ref] = drop["dmc"], drop["PyTorch"]
        if not judge(runs, args.steps, label_dmc):
            failures.append(label_dmc)
        judge(runs, args.steps, label_ref)  # shown, not a criterion: other dropout masks
        summary["dropout"] = {"p": args.dropout, "dmc": final(drop["dmc"]),
                              "pytorch": final(drop["PyTorch"]), "dmc eval": drop["dmc eval"][0],
                              "pytorch eval": drop["PyTorch eval"][0]}
        print(f"train: dropout {args.dropout:g}: eval loss (dropout off) dmc "
              f"{drop['dmc eval'][0]:.4f}, PyTorch {drop['PyTorch eval'][0]:.4f}")
    runs = {k: v for k, v in runs.items() if v is not None}
    with open(os.path.join(args.out, "train-losses.json"), "w") as f:
        json.dump({"summary": summary, "losses": runs}, f)
    if not args.no_plot:
        plot(runs, os.path.join(args.out, "train-loss.png"), args.steps)
        print(f"train: wrote {os.path.join(args.out, 'train-loss.png')}")
    if failures:
        print(f"train: FAIL ({', '.join(failures)})")
        return 1
    print("train: PASS" + (" (reference only: nothing compared)" if bundle is None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
