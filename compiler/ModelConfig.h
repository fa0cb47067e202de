//===- ModelConfig.h - the model description (model.json) -----------------===//
//
// A model description names one transformer layer: its kind, sizes,
// activation, norm placement, dropout, masks and precision. Parsing checks
// every field and reports problems naming the file, the field and the value.
// The format is documented in docs of examples/README.md.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_COMPILER_MODELCONFIG_H
#define DMC_COMPILER_MODELCONFIG_H

#include "llvm/Support/Error.h"

#include "runtime/format/DType.h"

#include <cstdint>
#include <string>

namespace dmc {

enum class LayerKind { Encoder, Decoder, Gpt };

struct ModelConfig {
  std::string name = "layer";
  LayerKind kind = LayerKind::Encoder;
  int64_t batch = 0, seq = 0, memorySeq = 0;
  int64_t hidden = 0, heads = 0, headDim = 0, ffn = 0;
  /// Identical layers applied in sequence (a decoder stack shares its memory).
  int64_t layers = 1;
  std::string activation; ///< gelu | gelu_tanh | relu
  bool preNorm = false;   ///< norm: "pre" (GPT/ViT) or "post" (BERT)
  double dropoutAttention = 0, dropoutHidden = 0, dropoutActivation = 0;
  double layernormEps = 1e-5;
  bool bias = true;
  bool keyPadding = false;
  dmrt::DType dtype = dmrt::DType::BF16; ///< bf16 | f16 | f32
};

const char *layerKindName(LayerKind kind);

/// Parses and validates a model description; `fileName` prefixes messages.
llvm::Expected<ModelConfig> parseModelConfig(llvm::StringRef text, llvm::StringRef fileName);
/// Reads `path` and parses it.
llvm::Expected<ModelConfig> loadModelConfig(llvm::StringRef path);

} // namespace dmc

#endif // DMC_COMPILER_MODELCONFIG_H
