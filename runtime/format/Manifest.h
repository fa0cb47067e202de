//===- Manifest.h - The bundle manifest: types and its one codec ---*- C++ -*-===//
//
// `manifest.json` of a layer bundle (docs/bundle-format.md, format
// "dmc-bundle", versions 1 to 5) as plain structs, with the one reader and
// the one writer of that file: the compiler (compiler/bundle/BundleWriter)
// fills a Manifest and calls writeManifest; the runtime (runtime/Bundle) calls
// parseManifest. parseManifest(writeManifest(m)) == m and
// writeManifest(parseManifest(text)) == text for every manifest dmc writes.
//
// The reader type-checks every field and rejects unknown fields, formats and
// versions; errors name the file, the JSON path (`kernels[3].grid`) and what
// was expected. No exceptions leave this API. MLIR-free and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_MANIFEST_H
#define DMRT_FORMAT_MANIFEST_H

#include "runtime/format/DType.h"
#include "runtime/format/GemmDescriptor.h"
#include "runtime/format/TensorRole.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dmrt {

/// The manifest versions this code reads; it writes the newest.
inline constexpr int64_t kManifestVersion = 10;

/// A shape as error messages spell it: "[8, 512, 1024]".
std::string shapeString(const std::vector<int64_t> &shape);

struct BundleTensor {
  int64_t id = 0;
  std::string name, dims;
  TensorRole role = TensorRole::Intermediate;
  std::vector<int64_t> shape;
  DType dtype = DType::F32; // F32, F16, BF16 or I32
  int64_t bytes = 0;
  /// alias: a view of tensor `aliasOf` starting at element `aliasOffset`.
  bool isAlias = false;
  int64_t aliasOf = -1, aliasOffset = 0;
  /// `alias.strides` (version 10): a strided view, e.g. a slice of a stack
  /// whose producers write in place (dmc's dm-stack-in-place): the element
  /// stride in the base (`aliasOf`, itself no alias) of each of `dims`.
  /// Empty: the view is dense in its own dims' order.
  std::vector<int64_t> aliasStrides;
  /// `arena` (version 3): byte offset in the arena (runtime/format/ArenaPlan.h);
  /// -1 (null) for aliases and caller memory, and in versions 1 and 2.
  int64_t arenaOffset = -1;
  /// `inference_arena` (version 5): byte offset in the inference arena (the
  /// forward-only plan, runtime/format/ArenaPlan.h); -1 (null) for aliases,
  /// caller memory and tensors no forward step uses, and before version 5.
  int64_t inferenceArenaOffset = -1;
  /// `init` (version 4; required on arguments: input, param, grad_output,
  /// absent elsewhere): how `dmc eval` and `dmc-run` draw the tensor when it
  /// is not given: element e = initMean + initRange * v_e (floats) or
  /// v_e in [1, initMax] (integers), v from runtime/ReferenceData.h on
  /// stream fnv1a32(name) (runtime/ArgumentData.h).
  bool hasInit = false;
  double initMean = 0, initRange = 1;
  int64_t initMax = 1;
  int64_t numElements() const;
  /// Elements from the first to one past the last this tensor touches in its
  /// base: numElements() unless strided.
  int64_t spanElements() const;
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
  /// same pointer to every launch (runtime/format/KernelAbi.h); each launch
  /// leaves it ready for the next (e.g. the last block of a split reduction
  /// resets its counter to 0).
  int64_t workspaceBytes = 0;
  /// `workspace_offset` (version 3, present iff workspaceBytes > 0): byte
  /// offset of the workspace in the arena, a region no other block shares;
  /// -1 otherwise.
  int64_t workspaceOffset = -1;
  /// `inference_workspace_offset` (version 5, present iff workspaceBytes > 0
  /// and the kernel's phase is not "backward"): the workspace's offset in
  /// the inference arena; -1 otherwise.
  int64_t inferenceWorkspaceOffset = -1;
  /// `cubin_bytes` and `cubin_fnv1a64` (version 4, required there): the
  /// cubin's size and its FNV-1a 64 checksum (runtime/format/Checksum.h);
  /// -1 / 0 before version 4. loadBundle checks the file against both.
  int64_t cubinBytes = -1;
  uint64_t cubinChecksum = 0;
  /// `finish` (version 7, optional): a second launch, right after the
  /// kernel's, of entry `finishEntry` of the same cubin with the same
  /// parameters (a kernel's column sums added from its workspace's
  /// per-block partials in a fixed order, codegen/ColumnSums.cpp). Empty
  /// entry: none.
  std::string finishEntry;
  int64_t finishGrid[3] = {1, 1, 1}, finishBlock[3] = {1, 1, 1};
  /// `finish.outputs` (version 9, optional): the positions in `outputs` that
  /// only the finishing launch writes (the column sums); the kernel's own
  /// launch writes the others and the workspace, which the finishing launch
  /// reads. A CUDA graph then orders the finishing launch apart: the steps
  /// reading the other outputs need not wait for it. Empty: both launches
  /// are taken to touch everything.
  std::vector<int64_t> finishOutputs;
};

struct BundleContraction {
  int64_t id = 0;
  std::string equation, phase;
  int64_t a = -1, b = -1, d = -1;
  int64_t bias = -1; // tensor id, -1: none
  double alpha = 1, beta = 0;
  Epilogue epilogue = Epilogue::None;
  int64_t flop = 0, bytes = 0;
  bool mappable = false;  // gemm present
  std::string unmappable; // the reason when !mappable
  GemmDescriptor gemm;
  /// `algorithm` (version 6; optional, default "heuristic"): the cuBLASLt
  /// algorithm to run, "heuristic" or GemmAlgoConfig's text form
  /// (runtime/format/GemmAlgoConfig.h), as config.json chose it.
  std::string algorithm = "heuristic";
  /// `gemm.describe`: the writer's GemmDescriptor::describe(), which names
  /// the letters on each axis (not otherwise stored).
  std::string gemmDescription;

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

struct Manifest {
  std::string format = "dmc-bundle";
  int64_t version = kManifestVersion;
  std::string model, arch, nvrtc;
  /// `arena_bytes` (version 3): size of the one device arena holding every
  /// intermediate and workspace at its planned offset; 0 in versions 1, 2.
  int64_t arenaBytes = 0;
  /// `inference_arena_bytes` (version 5): size of the arena of the
  /// forward-only (inference) plan; 0 before version 5, where inference
  /// uses the training plan (ArenaPlan.h planUsed).
  int64_t inferenceArenaBytes = 0;
  std::vector<BundleTensor> tensors;
  std::vector<BundleKernel> kernels;
  std::vector<BundleContraction> contractions;
  std::vector<BundleStep> steps;

  /// Lookups by id (nullptr when absent). Valid after parseManifest, or
  /// after reindex() on a manifest built in memory.
  const BundleTensor *tensor(int64_t id) const;
  const BundleKernel *kernel(int64_t id) const;
  const BundleKernel *kernelByName(const std::string &name) const;
  const BundleContraction *contraction(int64_t id) const;
  /// The tensor owning the memory of `id` (following aliases) and the element
  /// offset of `id` in it. Valid for any tensor of a parsed manifest.
  int64_t baseOf(int64_t id, int64_t &elementOffset) const;
  /// Rebuilds the id lookups from the vectors.
  void reindex();

private:
  friend bool parseManifest(const std::string &, const std::string &, Manifest &,
                            std::string &);
  std::map<int64_t, size_t> tensorIndex_, kernelIndex_, contractionIndex_;
};

/// Parses and validates manifest text. `fileName` prefixes every error.
bool parseManifest(const std::string &text, const std::string &fileName,
                   Manifest &out, std::string &error);

/// The manifest as JSON text (two-space indent, fields in the documented
/// order, a final newline).
std::string writeManifest(const Manifest &m);

} // namespace dmrt

#endif // DMRT_FORMAT_MANIFEST_H
