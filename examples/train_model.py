"""The model and synthetic task of examples/train.py (and tests/gpu/ddp_check.py).

Task, "noisy reversal": a sequence of `seq` tokens drawn uniformly from a vocabulary of
VOCAB; the target at position t is the token at position seq-1-t, replaced with
probability NOISE by a uniform random token. Each output must read another position,
so a model without attention stays at the loss ln(VOCAB); the label noise gives the
task a known floor (the Bayes loss `bayes_loss()`), so a trained model's loss settles
at a value that two implementations can be compared at (without noise both would go
to ~0, where a relative comparison means nothing).

Model: token embedding + learned positions (PyTorch), LAYERS encoder layers (dmc's
compiled layer or the plain-PyTorch reference layer: the one model description),
final LayerNorm and a linear classifier over the vocabulary (PyTorch). The layer stack
runs in the model description's dtype; everything around it in fp32.
"""

import json
import math

import torch
from torch import nn
import torch.nn.functional as F

VOCAB = 16
NOISE = 0.2
LAYERS = 4
_DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


class Spec:
    """The fields of a model description (examples/README.md) the wrapper model needs."""

    def __init__(self, path):
        with open(path) as f:
            model = json.load(f)
        self.path = path
        try:
            self.batch, self.seq, self.hidden = (int(model[k]) for k in ("batch", "seq", "hidden"))
        except KeyError as missing:
            raise ValueError(f"{path}: no field {missing}") from None
        if model.get("kind") != "encoder" or int(model.get("layers", 1)) != 1:
            raise ValueError(f"{path}: train.py stacks one-layer encoder descriptions "
                             f"(kind {model.get('kind')!r}, layers {model.get('layers', 1)})")
        if model.get("key_padding", False):
            raise ValueError(f"{path}: the task has no padding (key_padding must be false)")
        dtype = model.get("dtype", "bf16")
        if dtype not in _DTYPES:
            raise ValueError(f"{path}: dtype {dtype!r} is not one of {sorted(_DTYPES)}")
        self.dtype_name, self.dtype = dtype, _DTYPES[dtype]
        dropout = model.get("dropout", 0.0)
        self.dropout = max(dropout.values()) if isinstance(dropout, dict) else float(dropout)

    def check_bundle(self, bundle):
        """Raises ValueError unless the bundle's input x is [batch, seq, hidden] of our dtype.

        Reads the bundle's manifest (docs/bundle-format.md): batch and sequence length are
        compiled in, so a description that disagrees with its bundle is a usage error.
        """
        try:
            with open(f"{bundle}/manifest.json") as f:
                tensors = json.load(f)["tensors"]
        except (OSError, ValueError, KeyError) as e:
            raise ValueError(f"{bundle}: not a readable bundle ({e}); "
                             f"run tests/gpu/make-bundles.sh on the compiler machine") from None
        x = next((t for t in tensors if t.get("name") == "x"), None)
        want = [self.batch, self.seq, self.hidden]
        if x is None or x.get("shape") != want or x.get("dtype") != self.dtype_name:
            got = None if x is None else (x.get("shape"), x.get("dtype"))
            raise ValueError(f"{bundle}: input x is {got}, but {self.path} describes "
                             f"{(want, self.dtype_name)}: recompile the bundle")


class TokenModel(nn.Module):
    """Embedding + positions -> encoder layers -> LayerNorm -> classifier."""

    def __init__(self, layers, spec):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, spec.hidden)
        self.pos = nn.Parameter(torch.zeros(spec.seq, spec.hidden))
        self.layers = nn.ModuleList(layers)
        self.norm = nn.LayerNorm(spec.hidden)
        self.head = nn.Linear(spec.hidden, VOCAB)
        self.dtype = spec.dtype

    def forward(self, tokens):
        h = (self.embed(tokens) + self.pos).to(self.dtype)
        for layer in self.layers:
            h = layer(h)
        return self.head(self.norm(h.float()))


def build(spec, device, bundle=None, eval_bundle=None):
    """The model with dmc layers from `bundle`, or with reference layers when it is None.

    `eval_bundle`: for a bundle with dropout, the same layer compiled without it, which
    dmc's layers run in eval() (the runtime's inference mode keeps a bundle's dropout)."""
    try:
        import dmc.torch  # python/dmc: the compiled layer and its plain-PyTorch reference
    except ImportError as e:
        raise ImportError(f"the dmc package (python/dmc) is not importable: {e}") from e

    if bundle is None:
        layers = [dmc.torch.reference_layer(spec.path).to(device=device, dtype=spec.dtype)
                  for _ in range(LAYERS)]
    else:  # dmc's layers live on the current CUDA device (set by the caller)
        spec.check_bundle(bundle)
        layers = [dmc.torch.Layer(bundle, eval_bundle=eval_bundle) for _ in range(LAYERS)]
    model = TokenModel(layers, spec)
    for part in (model.embed, model.norm, model.head):
        part.to(device)
    model.pos.data = model.pos.data.to(device)
    return model


def initialize(model, seed):
    """Deterministic initial weights (drawn on the CPU): BERT's normal(0, 0.02) for every
    matrix and embedding, zero biases and LayerNorm shifts, unit LayerNorm scales."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if leaf == "gamma" or name == "norm.weight":
                value = torch.ones(p.shape)
            elif leaf in ("bq", "bk", "bv", "bo", "b1", "b2", "beta", "bias"):
                value = torch.zeros(p.shape)
            else:
                value = torch.randn(p.shape, generator=generator) * 0.02
            p.copy_(value.to(p.dtype))


def copy_weights(source, target):
    """Loads source's state into target and checks every tensor arrived unchanged."""
    state = source.state_dict()
    target.load_state_dict(state)
    for name, value in target.state_dict().items():
        if not torch.equal(value.cpu(), state[name].cpu()):
            raise RuntimeError(f"load_state_dict did not copy {name}")


def make_batch(generator, batch, seq, device):
    """(tokens, targets) [batch, seq] of the noisy reversal task, drawn on the CPU."""
    tokens = torch.randint(VOCAB, (batch, seq), generator=generator)
    targets = tokens.flip(1)
    noisy = torch.rand(batch, seq, generator=generator) < NOISE
    targets = torch.where(noisy, torch.randint(VOCAB, (batch, seq), generator=generator), targets)
    return tokens.to(device), targets.to(device)


def loss_of(model, tokens, targets):
    logits = model(tokens)
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def bayes_loss():
    """The expected loss of the best possible predictor of the task (nats per token)."""
    right = 1.0 - NOISE + NOISE / VOCAB
    wrong = NOISE / VOCAB
    return -(right * math.log(right) + (VOCAB - 1) * wrong * math.log(wrong))


def gradient_errors(got, want):
    """{name: (max |got - want|, scale)} for every gradient in `want`. The scale is the
    tensor's max |want|, except for a key bias (`attn.bk`): its gradient is zero by
    construction (the softmax over keys ignores a constant added to every score), so
    it is measured against the query bias's scale, as tests/oracle does."""
    out = {}
    for name, ref in want.items():
        scale = ref.abs().max().item()
        if name.endswith("attn.bk"):
            scale = max(scale, want[name[:-1] + "q"].abs().max().item())
        out[name] = ((got[name] - ref).abs().max().item(), scale)
    return out
