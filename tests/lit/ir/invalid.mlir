// RUN: dmc-opt %s --split-input-file --verify-diagnostics

// One case per verifier rule of the !dm.tensor type and the dm ops.

//===----------------------------------------------------------------------===//
// !dm.tensor
//===----------------------------------------------------------------------===//

// expected-error @+1 {{dimension 'i' appears twice in a tensor type}}
func.func private @duplicate_dim(!dm.tensor<[i=4, j=2, i=4], f32>)

// -----

// expected-error @+1 {{dimension name '_' is not a letter}}
func.func private @non_letter_name(!dm.tensor<[_=4], f32>)

// -----

// expected-error @+1 {{dimension names are single letters, got 'ab'}}
func.func private @multi_letter_name(!dm.tensor<[ab=4], f32>)

// -----

// expected-error @+1 {{dimension 'i' has size 0; sizes must be positive}}
func.func private @zero_size(!dm.tensor<[i=0], f32>)

// -----

// expected-error @+1 {{dimension 'j' has size -3; sizes must be positive}}
func.func private @negative_size(!dm.tensor<[i=2, j=-3], f32>)

// -----

// A name without a size: the names/sizes count check of TensorType::verify
// cannot be reached from text (every parsed dimension has both), so the
// parser rejects it.
// expected-error @+1 {{expected '='}}
func.func private @name_without_size(!dm.tensor<[i], f32>)

// -----

// expected-error @+1 {{element type 'index' is neither a float nor an integer type}}
func.func private @index_element(!dm.tensor<[i=4], index>)

// -----

// expected-error @+1 {{element type 'complex<f32>' is neither a float nor an integer type}}
func.func private @complex_element(!dm.tensor<[i=4], complex<f32>>)

//===----------------------------------------------------------------------===//
// Size agreement of einsum letters (all ops, verifyConsistentDims)
//===----------------------------------------------------------------------===//

// -----

func.func @letter_size_between_operands(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=6], f32>) {
  // expected-error @+1 {{'dm.contract' op dimension 'i' has size 8 in operand 0 but 6 in operand 1}}
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=6], f32> -> !dm.tensor<[b=2, u=4], f32>
  return
}

// -----

func.func @letter_size_operand_result(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>) {
  // expected-error @+1 {{'dm.contract' op dimension 'b' has size 2 in operand 0 but 3 in result 0}}
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=3, u=4], f32>
  return
}

// -----

// A contraction's result is in its operands' element type or f32 (an
// unrounded sum: attention's Drow); f16 of bf16 operands is neither.
func.func @contract_result_type(%x: !dm.tensor<[b=2, i=8], bf16>, %w: !dm.tensor<[u=4, i=8], bf16>) {
  // expected-error @+1 {{'dm.contract' op mixes element types 'bf16' and 'f16'}}
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], bf16>, !dm.tensor<[u=4, i=8], bf16> -> !dm.tensor<[b=2, u=4], f16>
  return
}

// -----

func.func @letter_size_bias(%x: !dm.tensor<[b=2, i=8], f32>, %bias: !dm.tensor<[i=4], f32>) {
  // expected-error @+1 {{'dm.bias_add' op dimension 'i' has size 8 in operand 0 but 4 in operand 1}}
  %0 = dm.bias_add %x, %bias : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=4], f32>
  return
}

//===----------------------------------------------------------------------===//
// dm.contract
//===----------------------------------------------------------------------===//

// -----

func.func @contract_rhs_letter_dropped(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>) {
  // expected-error @+1 {{'dm.contract' op dimension 'u' of operand 1 appears in neither the other operand nor the result}}
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2], f32>
  return
}

// -----

func.func @contract_lhs_letter_dropped(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>) {
  // expected-error @+1 {{'dm.contract' op dimension 'b' of operand 0 appears in neither the other operand nor the result}}
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[u=4], f32>
  return
}

// -----

func.func @contract_result_letter_from_nowhere(%x: !dm.tensor<[b=2, i=8], f32>, %w: !dm.tensor<[u=4, i=8], f32>) {
  // expected-error @+1 {{'dm.contract' op result dimension 'z' appears in no operand}}
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=4, i=8], f32> -> !dm.tensor<[b=2, u=4, z=3], f32>
  return
}

// -----

func.func @contract_integers(%x: !dm.tensor<[b=2, i=8], i32>, %w: !dm.tensor<[u=4, i=8], i32>) {
  // expected-error @+1 {{'dm.contract' op operand #0 must be dm tensor of floats, but got '!dm.tensor<[b=2, i=8], i32>'}}
  %0 = dm.contract %x, %w : !dm.tensor<[b=2, i=8], i32>, !dm.tensor<[u=4, i=8], i32> -> !dm.tensor<[b=2, u=4], i32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

// -----

func.func @bias_dim_not_in_input(%x: !dm.tensor<[b=2, i=8], f32>, %bias: !dm.tensor<[u=8], f32>) {
  // expected-error @+1 {{'dm.bias_add' op bias dimension 'u' is not a dimension of the input}}
  %0 = dm.bias_add %x, %bias : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[u=8], f32>
  return
}

// -----

func.func @add_types_differ(%a: !dm.tensor<[s=1, h=2], f32>) {
  // expected-error @+1 {{'dm.add' op failed to verify that all of {lhs, rhs, result} have same type}}
  %0 = "dm.add"(%a, %a) : (!dm.tensor<[s=1, h=2], f32>, !dm.tensor<[s=1, h=2], f32>) -> !dm.tensor<[h=2, s=1], f32>
  return
}

// -----

func.func @unknown_activation(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.activation' op unknown activation 'swish'; expected gelu, gelu_tanh or relu}}
  %0 = dm.activation %x {kind = "swish"} : !dm.tensor<[b=2, i=8], f32>
  return
}

// -----

func.func @unknown_activation_grad(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.activation_grad' op unknown activation 'GELU'; expected gelu, gelu_tanh or relu}}
  %0 = dm.activation_grad %x, %x {kind = "GELU"} : !dm.tensor<[b=2, i=8], f32>
  return
}

// -----

func.func @dropout_p_one(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.dropout' op probability 1.000000e+00 is outside [0, 1)}}
  %0 = dm.dropout %x {p = 1.0 : f64, id = 0 : i64, order = "bi"} : !dm.tensor<[b=2, i=8], f32>
  return
}

// -----

func.func @dropout_p_negative(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.dropout' op probability -1.000000e-01 is outside [0, 1)}}
  %0 = dm.dropout %x {p = -0.1 : f64, id = 0 : i64, order = "bi"} : !dm.tensor<[b=2, i=8], f32>
  return
}

// -----

func.func @dropout_p_nan(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.dropout' op probability nan is outside [0, 1)}}
  %0 = dm.dropout %x {p = 0x7FF8000000000000 : f64, id = 0 : i64, order = "bi"} : !dm.tensor<[b=2, i=8], f32>
  return
}

// -----

func.func @dropout_id_too_large(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.dropout' op id 4294967296 is outside [0, 2^32)}}
  %0 = dm.dropout %x {p = 0.1 : f64, id = 4294967296 : i64, order = "bi"} : !dm.tensor<[b=2, i=8], f32>
  return
}

// -----

// Saved keep bits (dm-fuse-attention): x's dims with the key replaced by
// ceil(keys / 32) words, in any layout.

func.func @keep_bits_ok(%x: !dm.tensor<[j=3, k=40], bf16>) {
  %0 = dm.dropout_keep_bits %x {p = 0.1 : f64, id = 0 : i64, order = "jk", key = "k", word = "w"} : <[j=3, k=40], bf16> -> <[w=2, j=3], i32>
  %1 = dm.dropout_apply_bits %x, %0 {p = 0.1 : f64, key = "k", word = "w"} : <[j=3, k=40], bf16>, <[w=2, j=3], i32>
  return
}

// -----

func.func @keep_bits_word_count(%x: !dm.tensor<[j=3, k=40], bf16>) {
  // expected-error @+1 {{'dm.dropout_keep_bits' op keep bits dimension 'w' has size 1, expected 2}}
  %0 = dm.dropout_keep_bits %x {p = 0.1 : f64, id = 0 : i64, order = "jk", key = "k", word = "w"} : <[j=3, k=40], bf16> -> <[j=3, w=1], i32>
  return
}

// -----

func.func @keep_bits_dims(%x: !dm.tensor<[j=3, k=40], bf16>) {
  // expected-error @+1 {{'dm.dropout_keep_bits' op keep bits have dims 'jv', expected 'jw' in some order}}
  %0 = dm.dropout_keep_bits %x {p = 0.1 : f64, id = 0 : i64, order = "jk", key = "k", word = "w"} : <[j=3, k=40], bf16> -> <[j=3, v=2], i32>
  return
}

// -----

func.func @keep_bits_word_is_a_dim(%x: !dm.tensor<[j=3, k=40], bf16>) {
  // expected-error @+1 {{'dm.dropout_keep_bits' op word 'j' is already a dimension of x ('jk')}}
  %0 = dm.dropout_keep_bits %x {p = 0.1 : f64, id = 0 : i64, order = "jk", key = "k", word = "j"} : <[j=3, k=40], bf16> -> <[j=3, w=2], i32>
  return
}

// -----

func.func @keep_bits_order(%x: !dm.tensor<[j=3, k=40], bf16>) {
  // expected-error @+1 {{'dm.dropout_keep_bits' op order 'jq' is not a permutation of the dims 'jk'}}
  %0 = dm.dropout_keep_bits %x {p = 0.1 : f64, id = 0 : i64, order = "jq", key = "k", word = "w"} : <[j=3, k=40], bf16> -> <[j=3, w=2], i32>
  return
}

// -----

func.func @apply_bits_key(%x: !dm.tensor<[j=3, k=40], bf16>, %b: !dm.tensor<[j=3, w=2], i32>) {
  // expected-error @+1 {{'dm.dropout_apply_bits' op key 'q' must be one dimension of x ('jk') and word 'w' one letter}}
  %0 = dm.dropout_apply_bits %x, %b {p = 0.1 : f64, key = "q", word = "w"} : <[j=3, k=40], bf16>, <[j=3, w=2], i32>
  return
}

// -----

func.func @apply_bits_p(%x: !dm.tensor<[j=3, k=40], bf16>, %b: !dm.tensor<[j=3, w=2], i32>) {
  // expected-error @+1 {{'dm.dropout_apply_bits' op probability 1.000000e+00 is outside [0, 1)}}
  %0 = dm.dropout_apply_bits %x, %b {p = 1.0 : f64, key = "k", word = "w"} : <[j=3, k=40], bf16>, <[j=3, w=2], i32>
  return
}

// -----

// The counter order must be a permutation of the dims.
func.func @dropout_order(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.dropout' op order 'bj' is not a permutation of the dims 'bi'}}
  %0 = dm.dropout %x {p = 0.1 : f64, id = 0 : i64, order = "bj"} : !dm.tensor<[b=2, i=8], f32>
  return
}

// -----

// A negative id is rejected, but reported as its unsigned 64-bit value.
func.func @dropout_id_negative(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error-re @+1 {{'dm.dropout' op id -1 is outside [0, 2^32)}}
  %0 = dm.dropout %x {p = 0.1 : f64, id = -1 : i64, order = "bi"} : !dm.tensor<[b=2, i=8], f32>
  return
}

//===----------------------------------------------------------------------===//
// Masks
//===----------------------------------------------------------------------===//

// -----

func.func @causal_query_is_key(%x: !dm.tensor<[j=4, k=4], f32>) {
  // expected-error @+1 {{'dm.causal_mask' op query and key must be two different single dimensions}}
  %0 = dm.causal_mask %x {query = "j", key = "j", fill = 0.0 : f64} : !dm.tensor<[j=4, k=4], f32>
  return
}

// -----

func.func @causal_query_two_letters(%x: !dm.tensor<[j=4, k=4], f32>) {
  // expected-error @+1 {{'dm.causal_mask' op query and key must be two different single dimensions}}
  %0 = dm.causal_mask %x {query = "jk", key = "k", fill = 0.0 : f64} : !dm.tensor<[j=4, k=4], f32>
  return
}

// -----

func.func @causal_query_missing(%x: !dm.tensor<[j=4, k=4], f32>) {
  // expected-error @+1 {{'dm.causal_mask' op 'query' names dimension 'q', which the input '!dm.tensor<[j=4, k=4], f32>' lacks}}
  %0 = dm.causal_mask %x {query = "q", key = "k", fill = 0.0 : f64} : !dm.tensor<[j=4, k=4], f32>
  return
}

// -----

func.func @causal_key_missing(%x: !dm.tensor<[j=4, k=4], f32>) {
  // expected-error @+1 {{'dm.causal_mask' op 'key' names dimension 'm', which the input '!dm.tensor<[j=4, k=4], f32>' lacks}}
  %0 = dm.causal_mask %x {query = "j", key = "m", fill = 0.0 : f64} : !dm.tensor<[j=4, k=4], f32>
  return
}

// -----

func.func @causal_sizes_differ(%x: !dm.tensor<[j=4, k=6], f32>) {
  // expected-error @+1 {{'dm.causal_mask' op query and key dimensions differ in size}}
  %0 = dm.causal_mask %x {query = "j", key = "k", fill = 0.0 : f64} : !dm.tensor<[j=4, k=6], f32>
  return
}

// -----

func.func @padding_lengths_i64(%x: !dm.tensor<[b=2, k=4], f32>, %l: !dm.tensor<[b=2], i64>) {
  // expected-error @+1 {{'dm.key_padding_mask' op operand #1 must be dm tensor of i32, but got '!dm.tensor<[b=2], i64>'}}
  %0 = dm.key_padding_mask %x, %l {key = "k", fill = 0.0 : f64} : !dm.tensor<[b=2, k=4], f32>, !dm.tensor<[b=2], i64>
  return
}

// -----

func.func @padding_lengths_2d(%x: !dm.tensor<[b=2, k=4], f32>, %l: !dm.tensor<[b=2, k=4], i32>) {
  // expected-error @+1 {{'dm.key_padding_mask' op lengths must be a 1-d i32 tensor, got '!dm.tensor<[b=2, k=4], i32>'}}
  %0 = dm.key_padding_mask %x, %l {key = "k", fill = 0.0 : f64} : !dm.tensor<[b=2, k=4], f32>, !dm.tensor<[b=2, k=4], i32>
  return
}

// -----

func.func @padding_lengths_dim_missing(%x: !dm.tensor<[b=2, k=4], f32>, %l: !dm.tensor<[c=2], i32>) {
  // expected-error @+1 {{'dm.key_padding_mask' op 'lengths' names dimension 'c', which the input '!dm.tensor<[b=2, k=4], f32>' lacks}}
  %0 = dm.key_padding_mask %x, %l {key = "k", fill = 0.0 : f64} : !dm.tensor<[b=2, k=4], f32>, !dm.tensor<[c=2], i32>
  return
}

// -----

func.func @padding_key_is_batch(%x: !dm.tensor<[b=2, k=4], f32>, %l: !dm.tensor<[b=2], i32>) {
  // expected-error @+1 {{'dm.key_padding_mask' op key must be one dimension other than the lengths' one}}
  %0 = dm.key_padding_mask %x, %l {key = "b", fill = 0.0 : f64} : !dm.tensor<[b=2, k=4], f32>, !dm.tensor<[b=2], i32>
  return
}

// -----

func.func @padding_key_missing(%x: !dm.tensor<[b=2, k=4], f32>, %l: !dm.tensor<[b=2], i32>) {
  // expected-error @+1 {{'dm.key_padding_mask' op 'key' names dimension 'm', which the input '!dm.tensor<[b=2, k=4], f32>' lacks}}
  %0 = dm.key_padding_mask %x, %l {key = "m", fill = 0.0 : f64} : !dm.tensor<[b=2, k=4], f32>, !dm.tensor<[b=2], i32>
  return
}

//===----------------------------------------------------------------------===//
// Normalizations
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_dim_missing(%x: !dm.tensor<[b=2, k=4], f32>) {
  // expected-error @+1 {{'dm.softmax' op 'dim' names dimension 'j', which the input '!dm.tensor<[b=2, k=4], f32>' lacks}}
  %0 = dm.softmax %x {dim = "j"} : !dm.tensor<[b=2, k=4], f32>
  return
}

// -----

func.func @softmax_dim_empty(%x: !dm.tensor<[b=2, k=4], f32>) {
  // expected-error @+1 {{'dm.softmax' op 'dim' names no dimension}}
  %0 = dm.softmax %x {dim = ""} : !dm.tensor<[b=2, k=4], f32>
  return
}

// -----

func.func @softmax_grad_dim_missing(%y: !dm.tensor<[b=2, k=4], f32>) {
  // expected-error @+1 {{'dm.softmax_grad' op 'dim' names dimension 'j', which the input '!dm.tensor<[b=2, k=4], f32>' lacks}}
  %0 = dm.softmax_grad %y, %y {dim = "j"} : !dm.tensor<[b=2, k=4], f32>
  return
}

// -----

func.func @layernorm_dims_missing(%x: !dm.tensor<[b=2, i=8], f32>, %g: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{'dm.layernorm' op 'dims' names dimension 'z', which the input '!dm.tensor<[b=2, i=8], f32>' lacks}}
  %y, %m, %r = dm.layernorm %x, %g, %g {dims = "z", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2], f32>
  return
}

// -----

func.func @layernorm_gamma_dims(%x: !dm.tensor<[b=2, i=8], f32>, %g: !dm.tensor<[b=2], f32>) {
  // expected-error @+1 {{'dm.layernorm' op gamma and beta must have exactly the normalized dimensions 'i', got '!dm.tensor<[b=2], f32>'}}
  %y, %m, %r = dm.layernorm %x, %g, %g {dims = "i", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2], f32> -> !dm.tensor<[b=2], f32>
  return
}

// -----

func.func @layernorm_gamma_extra_dim(%x: !dm.tensor<[b=2, i=8], f32>, %g: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.layernorm' op gamma and beta must have exactly the normalized dimensions 'i', got '!dm.tensor<[b=2, i=8], f32>'}}
  %y, %m, %r = dm.layernorm %x, %g, %g {dims = "i", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[b=2], f32>
  return
}

// -----

func.func @layernorm_mean_dims(%x: !dm.tensor<[b=2, i=8], f32>, %g: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{'dm.layernorm' op mean and rstd must have the dimensions 'b' of the input that are not normalized}}
  %y, %m, %r = dm.layernorm %x, %g, %g {dims = "i", eps = 1.0e-5 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2, i=8], f32>
  return
}

// -----

func.func @layernorm_grad_params_dgamma(%x: !dm.tensor<[b=2, i=8], f32>, %m: !dm.tensor<[b=2], f32>) {
  // expected-error @+1 {{'dm.layernorm_grad_params' op gamma and beta must have exactly the normalized dimensions 'i', got '!dm.tensor<[u=8], f32>'}}
  %dg, %db = dm.layernorm_grad_params %x, %x, %m, %m : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2], f32> -> !dm.tensor<[u=8], f32>
  return
}

// -----

func.func @reduce_sum_new_dim(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.reduce_sum' op result dimension 'u' is not an input dimension}}
  %0 = dm.reduce_sum %x : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[u=8], f32>
  return
}

// -----

func.func @broadcast_drops_dim(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.broadcast' op input dimension 'i' is not a result dimension}}
  %0 = dm.broadcast %x : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[b=2, j=8], f32>
  return
}

//===----------------------------------------------------------------------===//
// Layout and structure
//===----------------------------------------------------------------------===//

// -----

func.func @transpose_other_dims(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.transpose' op result '!dm.tensor<[i=8, j=2], f32>' is not a permutation of the input '!dm.tensor<[b=2, i=8], f32>'}}
  %0 = dm.transpose %x : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[i=8, j=2], f32>
  return
}

// -----

func.func @transpose_drops_dim(%x: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.transpose' op result '!dm.tensor<[i=8], f32>' is not a permutation of the input '!dm.tensor<[b=2, i=8], f32>'}}
  %0 = dm.transpose %x : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[i=8], f32>
  return
}

// -----

func.func @rename_lengths_differ(%x: !dm.tensor<[b=2, j=4], f32>) {
  // expected-error @+1 {{'dm.rename' op 'from' and 'to' must be non-empty and of equal length}}
  %0 = dm.rename %x {from = "j", to = "kl"} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[b=2, k=4], f32>
  return
}

// -----

func.func @rename_empty(%x: !dm.tensor<[b=2, j=4], f32>) {
  // expected-error @+1 {{'dm.rename' op 'from' and 'to' must be non-empty and of equal length}}
  %0 = dm.rename %x {from = "", to = ""} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[b=2, j=4], f32>
  return
}

// -----

func.func @rename_from_missing(%x: !dm.tensor<[b=2, j=4], f32>) {
  // expected-error @+1 {{'dm.rename' op 'from' names dimension 'm', which the input '!dm.tensor<[b=2, j=4], f32>' lacks}}
  %0 = dm.rename %x {from = "m", to = "k"} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[b=2, k=4], f32>
  return
}

// -----

func.func @rename_rank(%x: !dm.tensor<[b=2, j=4], f32>) {
  // expected-error @+1 {{'dm.rename' op renaming cannot change the rank}}
  %0 = dm.rename %x {from = "j", to = "k"} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[b=2, k=4, z=1], f32>
  return
}

// -----

func.func @rename_wrong_name(%x: !dm.tensor<[b=2, j=4], f32>) {
  // expected-error @+1 {{'dm.rename' op result dimension 1 is 'm', expected 'k'}}
  %0 = dm.rename %x {from = "j", to = "k"} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[b=2, m=4], f32>
  return
}

// -----

func.func @rename_reorders(%x: !dm.tensor<[b=2, j=4], f32>) {
  // expected-error @+1 {{'dm.rename' op result dimension 0 is 'k', expected 'b'}}
  %0 = dm.rename %x {from = "j", to = "k"} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[k=4, b=2], f32>
  return
}

// -----

func.func @rename_size(%x: !dm.tensor<[b=2, j=4], f32>) {
  // expected-error @+1 {{'dm.rename' op renaming cannot change sizes}}
  %0 = dm.rename %x {from = "j", to = "k"} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[b=2, k=5], f32>
  return
}

// -----

func.func @rename_element_type(%x: !dm.tensor<[b=2, j=4], f32>) {
  // expected-error @+1 {{'dm.rename' op mixes element types 'f32' and 'bf16'}}
  %0 = dm.rename %x {from = "j", to = "k"} : !dm.tensor<[b=2, j=4], f32> -> !dm.tensor<[b=2, k=4], bf16>
  return
}

// -----

func.func @stack_no_input() {
  // expected-error @+1 {{'dm.stack' op needs at least one input}}
  %0 = "dm.stack"() <{dim = "s"}> : () -> !dm.tensor<[s=1], f32>
  return
}

// -----

func.func @stack_input_types_differ(%a: !dm.tensor<[h=2], f32>, %b: !dm.tensor<[h=2], f16>) {
  // expected-error @+1 {{'dm.stack' op inputs must all have one type}}
  %0 = dm.stack %a, %b {dim = "s"} : !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f16> -> !dm.tensor<[s=2, h=2], f32>
  return
}

// -----

func.func @stack_dim_not_new(%a: !dm.tensor<[h=2], f32>) {
  // expected-error @+1 {{'dm.stack' op 'dim' must be one dimension that the slices lack, got 'h'}}
  %0 = dm.stack %a, %a {dim = "h"} : !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32> -> !dm.tensor<[h=2], f32>
  return
}

// -----

func.func @stack_dim_two_letters(%a: !dm.tensor<[h=2], f32>) {
  // expected-error @+1 {{'dm.stack' op 'dim' must be one dimension that the slices lack, got 'st'}}
  %0 = dm.stack %a, %a {dim = "st"} : !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32> -> !dm.tensor<[s=2, h=2], f32>
  return
}

// -----

func.func @stack_count(%a: !dm.tensor<[h=2], f32>) {
  // expected-error @+1 {{'dm.stack' op the stacked tensor needs dimension 's' of size 3}}
  %0 = dm.stack %a, %a, %a {dim = "s"} : !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32> -> !dm.tensor<[s=2, h=2], f32>
  return
}

// -----

func.func @stack_result_lacks_dim(%a: !dm.tensor<[h=2], f32>) {
  // expected-error @+1 {{'dm.stack' op the stacked tensor needs dimension 's' of size 2}}
  %0 = dm.stack %a, %a {dim = "s"} : !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32> -> !dm.tensor<[h=2], f32>
  return
}

// -----

func.func @stack_extra_dim(%a: !dm.tensor<[h=2], f32>) {
  // expected-error @+1 {{'dm.stack' op stacked tensor '!dm.tensor<[s=2, h=2, z=3], f32>' does not extend '!dm.tensor<[h=2], f32>'}}
  %0 = dm.stack %a, %a {dim = "s"} : !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32> -> !dm.tensor<[s=2, h=2, z=3], f32>
  return
}

// -----

func.func @stack_element_type(%a: !dm.tensor<[h=2], f32>) {
  // expected-error @+1 {{'dm.stack' op stacked tensor '!dm.tensor<[s=2, h=2], f16>' does not extend '!dm.tensor<[h=2], f32>'}}
  %0 = dm.stack %a, %a {dim = "s"} : !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32> -> !dm.tensor<[s=2, h=2], f16>
  return
}

// -----

func.func @unstack_no_output(%a: !dm.tensor<[s=1, h=2], f32>) {
  // expected-error @+1 {{'dm.unstack' op needs at least one output}}
  "dm.unstack"(%a) <{dim = "s"}> : (!dm.tensor<[s=1, h=2], f32>) -> ()
  return
}

// -----

func.func @unstack_output_types_differ(%a: !dm.tensor<[s=2, h=2], f32>) {
  // expected-error @+1 {{'dm.unstack' op outputs must all have one type}}
  %0:2 = dm.unstack %a {dim = "s"} : !dm.tensor<[s=2, h=2], f32> -> !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f16>
  return
}

// -----

func.func @unstack_count(%a: !dm.tensor<[s=2, h=2], f32>) {
  // expected-error @+1 {{'dm.unstack' op the stacked tensor needs dimension 's' of size 3}}
  %0:3 = dm.unstack %a {dim = "s"} : !dm.tensor<[s=2, h=2], f32> -> !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32>
  return
}

// -----

func.func @unstack_dim_missing(%a: !dm.tensor<[s=2, h=2], f32>) {
  // expected-error @+1 {{'dm.unstack' op the stacked tensor needs dimension 'q' of size 2}}
  %0:2 = dm.unstack %a {dim = "q"} : !dm.tensor<[s=2, h=2], f32> -> !dm.tensor<[h=2], f32>, !dm.tensor<[h=2], f32>
  return
}

// -----

func.func @unstack_slice_keeps_dim(%a: !dm.tensor<[s=2, h=2], f32>) {
  // expected-error @+1 {{'dm.unstack' op 'dim' must be one dimension that the slices lack, got 's'}}
  %0:2 = dm.unstack %a {dim = "s"} : !dm.tensor<[s=2, h=2], f32> -> !dm.tensor<[s=2], f32>, !dm.tensor<[s=2], f32>
  return
}

// -----

func.func @save_changes_type(%a: !dm.tensor<[s=1, h=2], f32>) {
  // expected-error @+1 {{'dm.save' op failed to verify that all of {x, result} have same type}}
  %0 = "dm.save"(%a) : (!dm.tensor<[s=1, h=2], f32>) -> !dm.tensor<[h=2, s=1], f32>
  return
}

// -----

func.func @transpose_changes_element_type(%a: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.transpose' op mixes element types 'f32' and 'bf16'}}
  %0 = dm.transpose %a : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[i=8, b=2], bf16>
  return
}

// -----

func.func @reduce_sum_changes_element_type(%a: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.reduce_sum' op mixes element types 'f32' and 'f16'}}
  %0 = dm.reduce_sum %a : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[i=8], f16>
  return
}

// -----

func.func @broadcast_changes_element_type(%a: !dm.tensor<[b=2, i=8], f32>) {
  // expected-error @+1 {{'dm.broadcast' op mixes element types 'f32' and 'f16'}}
  %0 = dm.broadcast %a : !dm.tensor<[b=2, i=8], f32> -> !dm.tensor<[b=2, i=8, j=3], f16>
  return
}

// -----

func.func @bias_add_mixed_element_types(%a: !dm.tensor<[b=2, i=8], f32>, %c: !dm.tensor<[i=8], bf16>) {
  // expected-error @+1 {{'dm.bias_add' op mixes element types 'f32' and 'bf16'}}
  %0 = dm.bias_add %a, %c : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], bf16>
  return
}

// -----

func.func @activation_of_integers(%a: !dm.tensor<[b=2, i=8], i32>) {
  // expected-error @+1 {{'dm.activation' op operand #0 must be dm tensor of floats}}
  %0 = dm.activation %a {kind = "relu"} : !dm.tensor<[b=2, i=8], i32>
  return
}

// -----

func.func @layernorm_negative_eps(%x: !dm.tensor<[b=2, i=8], f32>, %g: !dm.tensor<[i=8], f32>) {
  // expected-error @+1 {{'dm.layernorm' op eps must be positive, got -1}}
  %y, %m, %r = dm.layernorm %x, %g, %g {dims = "i", eps = -1.0 : f64} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[i=8], f32> -> !dm.tensor<[b=2], f32>
  return
}

// -----

func.func @layernorm_grad_input_bad_dims(%dy: !dm.tensor<[b=2, i=8], f32>, %m: !dm.tensor<[b=2], f32>, %g: !dm.tensor<[u=3], f32>) {
  // expected-error @+1 {{'dm.layernorm_grad_input' op 'dims' names dimension 'z', which the input '!dm.tensor<[b=2, i=8], f32>' lacks}}
  %0 = dm.layernorm_grad_input %dy, %dy, %m, %m, %g {dims = "z"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2], f32>, !dm.tensor<[u=3], f32>
  return
}

// -----

func.func @layernorm_grad_input_bad_gamma(%dy: !dm.tensor<[b=2, i=8], f32>, %m: !dm.tensor<[b=2], f32>, %g: !dm.tensor<[u=3], f32>) {
  // expected-error @+1 {{'dm.layernorm_grad_input' op gamma and beta must have exactly the normalized dimensions 'i', got '!dm.tensor<[u=3], f32>'}}
  %0 = dm.layernorm_grad_input %dy, %dy, %m, %m, %g {dims = "i"} : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[b=2], f32>, !dm.tensor<[u=3], f32>
  return
}

// -----

func.func @layernorm_grad_params_bad_mean(%dy: !dm.tensor<[b=2, i=8], f32>, %m: !dm.tensor<[z=2], f32>) {
  // expected-error @+1 {{'dm.layernorm_grad_params' op mean dimension 'z' is not an input dimension}}
  %g, %c = dm.layernorm_grad_params %dy, %dy, %m, %m : !dm.tensor<[b=2, i=8], f32>, !dm.tensor<[z=2], f32> -> !dm.tensor<[i=8], f32>
  return
}

// -----

func.func @softmax_repeated_dim(%a: !dm.tensor<[b=2, k=4], f32>) {
  // expected-error @+1 {{'dm.softmax' op 'dim' names dimension 'k' twice}}
  %0 = dm.softmax %a {dim = "kk"} : !dm.tensor<[b=2, k=4], f32>
  return
}

// -----

// expected-error @+1 {{expected a dimension name (one letter)}}
func.func @digit_dim_name(%a: !dm.tensor<[1=4], f32>) {
  return
}
