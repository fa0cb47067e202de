#!/usr/bin/env python3
"""PyTorch SDPA timings for the shapes of `dmc-attention-kernel-test --bench`.

torch.nn.functional.scaled_dot_product_attention, bf16, on the same shapes as
dmc's fused attention benchmark: B8 H16 L512 D64 (no mask) and B8 H16 L1024
D64 causal, each with dropout_p 0.1 and 0; once with PyTorch's own choice of
backend and once forced to each backend (flash, efficient, cudnn) that runs
the shape ("not available: ..." otherwise).
Forward alone and forward + backward are each the median of `--reps` runs
(CUDA events, after warm-up); backward = the difference of the medians.
TFLOP/s as dmc's bench: forward 4 B H L^2 D, backward 2.5x, halved causal.
Needs a CUDA GPU: exits 77 (skipped) without one.
"""
import argparse
import statistics
import sys


def median_ms(fn, reps, warmup):
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def bench(B, H, L, D, causal, dropout, reps, warmup, backend=None):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel
    torch.manual_seed(0)
    shape = (B, H, L, D)
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    do = torch.randn(shape, device="cuda", dtype=torch.bfloat16)

    def forward():
        return F.scaled_dot_product_attention(q, k, v, dropout_p=dropout, is_causal=causal)

    def forward_backward():
        q.grad = k.grad = v.grad = None
        forward().backward(do)

    name = f"B{B} H{H} L{L} D{D} bf16 dropout {dropout}" + (" causal" if causal else "")
    label = backend.name.lower() if backend is not None else "default backend"
    try:
        import contextlib
        ctx = sdpa_kernel([backend]) if backend is not None else contextlib.nullcontext()
        with ctx:
            with torch.no_grad():
                fwd = median_ms(forward, reps, warmup)
            both = median_ms(forward_backward, reps, warmup)
    except RuntimeError as e:
        print(f"SDPA {name} [{label}]: not available: {str(e).splitlines()[0][:120]}")
        return
    flop = 4.0 * B * H * L * L * D * (0.5 if causal else 1.0)
    bwd = both - fwd
    print(f"SDPA {name} [{label}]")
    print(f"  forward  {fwd:8.4f} ms {flop / fwd * 1e-9:7.1f} TFLOP/s")
    print(f"  backward {bwd:8.4f} ms {2.5 * flop / bwd * 1e-9:7.1f} TFLOP/s (fwd+bwd - fwd)")
    print(f"  fwd+bwd  {both:8.4f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print("SKIP: PyTorch is not installed")
        return 77
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    print(f"PyTorch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    from torch.nn.attention import SDPBackend
    backends = [None, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                SDPBackend.CUDNN_ATTENTION]
    for L, causal in ((512, False), (1024, True)):
        for dropout in (0.1, 0.0):
            for backend in backends:
                bench(8, 16, L, 64, causal, dropout, args.reps, args.warmup, backend)
    return 0


if __name__ == "__main__":
    sys.exit(main())
