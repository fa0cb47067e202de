"""Hugging Face layers built to match a dmc model description, run the HF way.

Shared by hf_check.py (CPU: HF against dmc.torch.reference_layer) and
tests/gpu/torch_module_check.py (GPU: HF against dmc.torch.Layer). Where HF and dmc
differ, the model description or the inputs are chosen so that they agree:
  - BertLayer: post-norm, erf gelu, layer-norm eps from the model ("layernorm_eps":
    1e-12 as BERT's config); the padding mask is HF's additive [b,1,1,k] mask (0 kept,
    finfo.min masked) from dmc's `lengths`; lengths are >= 1, since a row with every key
    masked gets uniform weights in HF and zero weights in dmc (examples/README.md).
  - GPT2Block: pre-norm, gelu_new (= dmc gelu_tanh), eps 1e-5; Conv1D weights are
    [in, out] (transposed by dmc.torch.hf); the causal mask is passed explicitly as an
    additive [b,1,j,k] mask (recent transformers build it in GPT2Model, not the block).
  - dropout 0 in both configs and eval(): dmc's masks differ from torch's.
Returns are fp32/fp64 tensors of `dtype` on `device`; gradients mapped into dmc names with
the same helpers as the weights (the mapping is a linear rearrangement).
"""

import copy

import torch

import dmc.torch.hf as dhf


def have_transformers():
    import importlib.util
    return importlib.util.find_spec("transformers") is not None


def _output(out):
    return out[0] if isinstance(out, (tuple, list)) else out


def bert_layer(model):
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertLayer
    cfg = BertConfig(hidden_size=model["hidden"], num_attention_heads=model["heads"],
                     intermediate_size=model["ffn"], hidden_act="gelu",
                     layer_norm_eps=model.get("layernorm_eps", 1e-5),
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    cfg._attn_implementation = "eager"
    return BertLayer(cfg).eval()


def gpt2_block(model):
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block
    cfg = GPT2Config(n_embd=model["hidden"], n_head=model["heads"], n_inner=model["ffn"],
                     activation_function="gelu_new", n_positions=max(model["seq"], 8),
                     layer_norm_epsilon=model.get("layernorm_eps", 1e-5), resid_pdrop=0.0,
                     attn_pdrop=0.0, embd_pdrop=0.0)
    cfg._attn_implementation = "eager"
    try:
        block = GPT2Block(cfg, layer_idx=0)
    except TypeError:
        block = GPT2Block(cfg)
    return block.eval()


def make(kind, model):
    """(HF module, its state dict in dmc names) for kind "bert" or "gpt2"."""
    if kind == "bert":
        layer = bert_layer(model)
        return layer, dhf.bert_layer_state_dict(layer)
    block = gpt2_block(model)
    return block, dhf.gpt2_block_state_dict(block)


def state_dict_of(kind, module):
    return dhf.bert_layer_state_dict(module) if kind == "bert" else \
        dhf.gpt2_block_state_dict(module)


def run(kind, module, x, lengths, dy):
    """HF forward and backward: y, x.grad, {dmc name: gradient}."""
    x = x.detach().clone().requires_grad_()
    b, j = x.shape[0], x.shape[1]
    if kind == "bert":
        mask = dhf.to_hf_bert_mask(lengths, j, x.dtype) if lengths is not None else None
        y = _output(module(x, attention_mask=mask))
    else:
        causal = torch.ones(j, j, dtype=torch.bool, device=x.device).tril()
        mask = torch.zeros(b, 1, j, j, dtype=x.dtype, device=x.device)
        mask = mask.masked_fill(~causal, torch.finfo(x.dtype).min)
        y = _output(module(x, attention_mask=mask))
    module.zero_grad()
    y.backward(dy)
    grads = copy.deepcopy(module)
    for g, p in zip(grads.parameters(), module.parameters()):
        g.data = p.grad.detach().clone()
    return y.detach(), x.grad.detach(), state_dict_of(kind, grads)


def compare(pairs, rtol, label):
    """pairs: [(name, got, ref)]; prints each tensor's worst error relative to its own
    max |ref| and returns the names over rtol. A key bias gradient (`P.bk.grad`) is zero
    by construction (softmax ignores a per-row shift): both sides hold rounding noise, so
    max |got| and max |ref| must each stay within rtol x the related scale, max |ref| of
    P.wq.grad, P.bq.grad and P.wk.grad (as tests/oracle/oracle.py measures it)."""
    refs = {name: ref for name, _, ref in pairs}
    failed = []
    for name, got, ref in pairs:
        if name.endswith(".bk.grad"):
            block = name[: -len("bk.grad")]
            scale = max(refs[block + w].abs().max().item() for w in ("wq.grad", "wk.grad"))
            err = max(got.abs().max().item(), ref.abs().max().item()) / scale
            what = "zero: max(|got|, |ref|)/related"
        else:
            scale = ref.abs().max().item()
            err = (got.double() - ref.double()).abs().max().item() / max(scale, 1e-30)
            what = "worst |err|/max|ref|"
        bad = not err <= rtol
        print(f"  {label} {name:16s} {what} {err:.2e} (scale {scale:.3g})"
              f"{'  FAIL' if bad else ''}")
        if bad:
            failed.append(name)
    return failed
