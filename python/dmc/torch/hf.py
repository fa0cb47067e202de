"""Hugging Face layer weights in dmc names and shapes (examples/README.md, "Hugging Face").

bert_layer_state_dict(transformers BertLayer) and gpt2_block_state_dict(GPT2Block) return
{dmc name: tensor} for Layer.load_state_dict / ReferenceLayer.load_state_dict (detached
copies in the module's dtype and device; cast with .to() as needed). The semantics that
make the layers equal (activation, norm placement, eps, masks) are set in the model
description, not here; examples/README.md lists them.

BertLayer (post-norm, erf gelu, eps = config.layer_norm_eps, usually 1e-12):
  attention.self.{query,key,value}.weight [h*p, i] -> attn.w{q,k,v} [h, p, i]
  attention.self.{query,key,value}.bias   [h*p]    -> attn.b{q,k,v} [h, p]
  attention.output.dense.weight [i, h*p] -> attn.wo [i, h, p];  .bias -> attn.bo
  attention.output.LayerNorm.{weight,bias} -> ln1.{gamma,beta}
  intermediate.dense.{weight [u, i], bias} -> ffn.{w1, b1}
  output.dense.{weight [i, u], bias} -> ffn.{w2, b2};  output.LayerNorm -> ln2
GPT2Block (pre-norm, gelu_new = gelu_tanh, eps = config.layer_norm_epsilon, 1e-5): its
Conv1D layers store weights as [in, out] (x @ W + b), the transpose of nn.Linear:
  attn.c_attn.weight [i, 3*h*p]: columns q | k | v -> attn.w{q,k,v} = W[:, part].T
      viewed [h, p, i];  attn.c_attn.bias [3*h*p] -> attn.b{q,k,v} [h, p]
  attn.c_proj.weight [h*p, i] -> attn.wo = W.T viewed [i, h, p];  .bias -> attn.bo
  mlp.c_fc.weight [i, u] -> ffn.w1 = W.T;  mlp.c_proj.weight [u, i] -> ffn.w2 = W.T
  ln_1 -> ln1, ln_2 -> ln2 (weight -> gamma, bias -> beta)
"""

import torch


def _t(tensor):
    return tensor.detach().clone()


def bert_layer_state_dict(layer) -> dict:
    """A transformers BertLayer's weights under dmc names (see the module docstring)."""
    self_attn = layer.attention.self
    heads = self_attn.num_attention_heads
    hp = self_attn.all_head_size
    p = hp // heads
    i = self_attn.query.weight.shape[1]
    out = {}
    for letter, lin in (("q", self_attn.query), ("k", self_attn.key), ("v", self_attn.value)):
        out[f"attn.w{letter}"] = _t(lin.weight).view(heads, p, i)
        out[f"attn.b{letter}"] = _t(lin.bias).view(heads, p)
    dense = layer.attention.output.dense
    out["attn.wo"] = _t(dense.weight).view(i, heads, p)
    out["attn.bo"] = _t(dense.bias)
    ln1 = layer.attention.output.LayerNorm
    out["ln1.gamma"], out["ln1.beta"] = _t(ln1.weight), _t(ln1.bias)
    out["ffn.w1"], out["ffn.b1"] = _t(layer.intermediate.dense.weight), _t(layer.intermediate.dense.bias)
    out["ffn.w2"], out["ffn.b2"] = _t(layer.output.dense.weight), _t(layer.output.dense.bias)
    ln2 = layer.output.LayerNorm
    out["ln2.gamma"], out["ln2.beta"] = _t(ln2.weight), _t(ln2.bias)
    return out


def gpt2_block_state_dict(block, config=None) -> dict:
    """A transformers GPT2Block's weights under dmc names (see the module docstring).

    `config` (a GPT2Config) gives the head count; without it, `block.attn.num_heads`."""
    heads = config.n_head if config is not None else block.attn.num_heads
    w = block.attn.c_attn.weight  # [i, 3*h*p]
    i, hp = w.shape[0], w.shape[1] // 3
    if hp % heads:
        raise ValueError(f"c_attn width {hp} is not divisible by heads {heads}")
    p = hp // heads
    bias = block.attn.c_attn.bias
    out = {}
    for n, letter in enumerate("qkv"):
        out[f"attn.w{letter}"] = _t(w[:, n * hp:(n + 1) * hp].t()).contiguous().view(heads, p, i)
        out[f"attn.b{letter}"] = _t(bias[n * hp:(n + 1) * hp]).view(heads, p)
    out["attn.wo"] = _t(block.attn.c_proj.weight.t()).contiguous().view(i, heads, p)
    out["attn.bo"] = _t(block.attn.c_proj.bias)
    out["ffn.w1"] = _t(block.mlp.c_fc.weight.t()).contiguous()
    out["ffn.b1"] = _t(block.mlp.c_fc.bias)
    out["ffn.w2"] = _t(block.mlp.c_proj.weight.t()).contiguous()
    out["ffn.b2"] = _t(block.mlp.c_proj.bias)
    out["ln1.gamma"], out["ln1.beta"] = _t(block.ln_1.weight), _t(block.ln_1.bias)
    out["ln2.gamma"], out["ln2.beta"] = _t(block.ln_2.weight), _t(block.ln_2.bias)
    return out


def to_hf_bert_mask(lengths, keys, dtype):
    """dmc's key lengths [b] as BertLayer's additive mask [b, 1, 1, keys] (0 kept, the
    dtype's most negative value masked, as BertModel.get_extended_attention_mask makes
    it). Rows with length 0 differ: HF then spreads the weights uniformly, dmc gives zero."""
    keep = torch.arange(keys, device=lengths.device)[None, :] < lengths[:, None].long()
    mask = torch.zeros(keep.shape, dtype=dtype, device=lengths.device)
    return mask.masked_fill(~keep, torch.finfo(dtype).min)[:, None, None, :]
