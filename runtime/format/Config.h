//===- Config.h - a layer's configuration as data (config.json) -----------===//
//
// Everything the compiler chose for one training layer, in a file the
// default pass, `dmc compile --config FILE` and the tuner all produce and
// read (docs/config-format.md): the layout of every tensor that crosses a
// kernel boundary, every fused kernel's knobs, every contraction's cuBLASLt
// form, and the transposes inserted where no producer could absorb a layout.
// Entries are keyed by tensor names (the bundle's, see compiler/bundle/
// TensorTable.h), kernel names (`k<n>_<name>`, as the bundle's entry points)
// and contraction names (`c<n>`, in step order). MLIR-free and CUDA-free.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_CONFIG_H
#define DMRT_FORMAT_CONFIG_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dmrt {

/// 2: the optional `prediction`; 3: the optional `paths`. Versions 1 and 2
/// still read.
inline constexpr int64_t kConfigVersion = 3;

/// A tensor's layout: its dimension letters, outermost first.
struct ConfigTensor {
  std::string name;
  std::string dims;
};

/// A fused kernel's knobs (codegen's KernelConfig, field for field).
struct ConfigKernel {
  std::string name;    ///< "k3_softmax_dropout"
  std::string laneDim; ///< "" or one letter
  int64_t tx = 1, ty = 1, perThread = 1, vec = 1, split = 1;
  /// A fused attention kernel's tiles (optional fields "block_m", "block_n",
  /// "warps", written only when warps > 0; 0 on loop-nest kernels).
  int64_t blockM = 0, blockN = 0, warps = 0;
  /// The attention kernel's products as sm_90a warpgroup MMA (optional field
  /// "wgmma", written only when true, with the tiles).
  bool wgmma = false;
  /// The attention kernel's blocks an SM for ptxas to fit (optional field
  /// "min_blocks", written only when > 0, with the tiles; 0: its own hint).
  int64_t minBlocks = 0;
  /// A column kernel's sweep unrolled by this many rows (optional field
  /// "unroll", written only when > 0; 0: unrolled whole).
  int64_t unroll = 0;
  std::string describe; ///< KernelConfig::describe(); informative, not read back
};

/// A contraction's cuBLASLt form in the chosen layouts.
struct ConfigContraction {
  std::string name;     ///< "c5"
  std::string equation; ///< "bhjp,bhkp->bhjk": the layouts of a, b, d
  bool swap = false;    ///< cuBLASLt's A is tensor b (D^T = B^T A^T)
  std::string transa = "N", transb = "N";
  int64_t batch = 1;
  /// Batch strides (elements) of cuBLASLt's A, B and D (after any swap).
  int64_t strideA = 0, strideB = 0, strideD = 0;
  std::string algorithm = "heuristic";
  std::string epilogue = "none";
};

/// A dm.transpose kernel where no producer could write the layout: operand
/// "a" or "b" of a contraction reads `tensor` through it in `dims`, or ("d")
/// the contraction writes `tensor` in `dims` and it restores the layout the
/// readers have.
struct ConfigTranspose {
  std::string contraction;
  std::string operand; ///< "a", "b" or "d"
  std::string tensor;
  std::string dims;
  int64_t bytes = 0; ///< read + written
};

/// What `dmc compile --db` predicted for the configuration it chose: the sum
/// of the measured medians of its steps (kernels, contractions, transposes),
/// by phase; the time between dependent kernels is not in it.
struct ConfigPrediction {
  std::string device;   ///< the GPU whose records priced it ("NVIDIA H200")
  std::string database; ///< the database file, as given to dmc compile
  double forwardUs = 0, backwardUs = 0;
  /// Each step's part: a kernel by its entry name ("k3_gelu_dropout"), a
  /// contraction by "c<index>" (written in the bundle's order, read back in
  /// name order); empty when not written (optional: `prediction.steps`).
  std::vector<std::pair<std::string, double>> steps;
  /// `calibration` (optional): the default configuration's whole step as
  /// measured on the device (a `step` record of the database, dmc-run --bench
  /// --record) and as its steps' records sum (microseconds; 0: none). Their
  /// ratio scales this prediction for what a sum leaves out: the time between
  /// dependent steps, kernels beside each other, a clock lowered at the power
  /// limit.
  double defaultMeasuredUs = 0, defaultPredictedUs = 0;
  double stepUs() const { return forwardUs + backwardUs; }
  bool calibrated() const { return defaultMeasuredUs > 0 && defaultPredictedUs > 0; }
  double calibration() const {
    return calibrated() ? defaultMeasuredUs / defaultPredictedUs : 1.0;
  }
};

/// Which alternative of each pass that changes the graph's kernels the layer
/// was compiled with (dmc compile's path flags, passes/Pipeline.h
/// PipelineOptions): `dmc compile --config` builds the same graph from them.
struct ConfigPaths {
  bool fusedAttention = true;       ///< "fused_attention" (--no-fused-attention)
  bool columnFusion = true;         ///< "column_fusion" (--no-column-fusion)
  std::string biasGrads = "saving"; ///< "bias_grads": "saving", "all" or "none" (--bias-grads)
  bool gemmAddends = true;          ///< "gemm_addends" (--no-gemm-addends)
  bool stackInPlace = false;        ///< "stack_in_place" (--stack-in-place)
  bool operator==(const ConfigPaths &o) const {
    return fusedAttention == o.fusedAttention && columnFusion == o.columnFusion &&
           biasGrads == o.biasGrads && gemmAddends == o.gemmAddends &&
           stackInPlace == o.stackInPlace;
  }
};

struct Configuration {
  std::string format = "dmc-config";
  int64_t version = kConfigVersion;
  std::string model;
  std::vector<ConfigTensor> tensors;
  std::vector<ConfigTranspose> transposes;
  std::vector<ConfigKernel> kernels;
  std::vector<ConfigContraction> contractions;
  /// `prediction` (version 2, optional): only when every step had a record.
  bool hasPrediction = false;
  ConfigPrediction prediction;
  /// `paths` (version 3, optional): absent in files of older versions and in
  /// configurations of graphs not built by the driver (dmc-opt).
  bool hasPaths = false;
  ConfigPaths paths;
};

/// Parses config.json; on failure `error` names the file, the JSON path, the
/// value found and what is allowed. Unknown fields are rejected.
bool parseConfig(const std::string &text, const std::string &fileName, Configuration &out,
                 std::string &error);
/// The one writer: parseConfig(writeConfig(c)) == c.
std::string writeConfig(const Configuration &c);

} // namespace dmrt

#endif // DMRT_FORMAT_CONFIG_H
