//===- Bundle.h - Load and validate a layer bundle (OUT.dmlib) ----*- C++ -*-===//
//
// Reads `BUNDLE/manifest.json` (docs/bundle-format.md, format "dmc-bundle",
// versions 1 and 2) into plain structs. Every field is type-checked; unknown fields,
// formats and versions are rejected. Errors name the file, the JSON path
// (e.g. `kernels[3].grid`) and what was expected. No exceptions leave this API.
//
// Beyond docs/bundle-format.md, a contraction may carry `"bias": ID|null`, the
// bias vector (or bias gradient) tensor; it is required when the epilogue
// reads or writes a bias. `epilogue` is cuBLASLt's name in lower case
// ("none" or "default", "bias", "relu_bias", "gelu_aux_bias", ...).
//
// CUDA-free (GemmDescriptor only uses cublasLt.h's enums).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_BUNDLE_H
#define DMRT_BUNDLE_H

#include "codegen/gemm/GemmMapping.h"
#include "runtime/Safetensors.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dmrt {

struct BundleTensor {
  int64_t id = 0;
  std::string name, role, dims;
  std::vector<int64_t> shape;
  DType dtype = DType::F32; // F32, F16, BF16 or I32
  int64_t bytes = 0;
  /// alias: a view of tensor `aliasOf` starting at element `aliasOffset`.
  bool isAlias = false;
  int64_t aliasOf = -1, aliasOffset = 0;
  int64_t numElements() const;
};

struct BundleKernel {
  int64_t id = 0;
  std::string name, entry, cubin, source, config, phase;
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  int64_t sharedBytes = 0;
  std::vector<int64_t> inputs, outputs; // tensor ids
  int64_t flop = 0, bytes = 0;
  /// Bytes of scratch memory (`workspace_bytes`, version 2; 0: none). When
  /// > 0 the runtime zeroes it once before the first launch and passes the
  /// same pointer to every launch, after the outputs and before the seed;
  /// each launch leaves it ready for the next (e.g. the last block of a split
  /// reduction resets its counter to 0).
  int64_t workspaceBytes = 0;
};

struct BundleContraction {
  int64_t id = 0;
  std::string equation, phase;
  int64_t a = -1, b = -1, d = -1;
  int64_t bias = -1; // tensor id, -1: none
  double alpha = 1, beta = 0;
  dmcgen::Epilogue epilogue = dmcgen::Epilogue::None;
  int64_t flop = 0, bytes = 0;
  bool mappable = false;  // gemm present
  std::string unmappable; // the reason when !mappable
  dmcgen::GemmDescriptor gemm;

  /// Tensors read: a, b, [bias if the epilogue reads it], [d if beta != 0].
  /// This is also the order of `in<k>` in reference/c<N>.safetensors.
  std::vector<int64_t> inputs() const;
  /// Tensors written: d, [bias if the epilogue writes a bias gradient].
  /// The order of `out<k>`.
  std::vector<int64_t> outputs() const;
};

struct BundleStep {
  enum Kind { Kernel, Contraction } kind = Kernel;
  int64_t id = 0;
};

struct Bundle {
  std::string dir; // the bundle directory ("" when parsed from text)
  std::string format;
  int64_t version = 0;
  std::string model, arch, nvrtc;
  std::vector<BundleTensor> tensors;
  std::vector<BundleKernel> kernels;
  std::vector<BundleContraction> contractions;
  std::vector<BundleStep> steps;

  const BundleTensor *tensor(int64_t id) const;
  const BundleKernel *kernel(int64_t id) const;
  const BundleKernel *kernelByName(const std::string &name) const;
  const BundleContraction *contraction(int64_t id) const;
  /// The tensor owning the memory of `id` (following aliases) and the element
  /// offset of `id` in it. Valid for any tensor of a loaded bundle.
  int64_t baseOf(int64_t id, int64_t &elementOffset) const;
  /// dir + "/" + rel.
  std::string path(const std::string &rel) const;

private:
  friend bool parseManifest(const std::string &, const std::string &, Bundle &,
                            std::string &);
  std::map<int64_t, size_t> tensorIndex_, kernelIndex_, contractionIndex_;
};

/// Parses and validates manifest text. `fileName` prefixes every error.
bool parseManifest(const std::string &text, const std::string &fileName,
                   Bundle &out, std::string &error);

/// Reads DIR/manifest.json, validates it, and checks that every kernel's cubin
/// exists inside the bundle.
bool loadBundle(const std::string &dir, Bundle &out, std::string &error);

/// "bf16", "f16", "f32", "i32" -> DType; false otherwise.
bool parseBundleDType(const std::string &s, DType &out);
/// Inverse of parseBundleDType.
const char *bundleDTypeName(DType t);
/// "none"/"default", "bias", ... (lower-case cuBLASLt names) -> Epilogue.
bool parseEpilogue(const std::string &s, dmcgen::Epilogue &out);

} // namespace dmrt

#endif // DMRT_BUNDLE_H
