//===- Harness.h - Run, check and time the steps of a bundle ------*- C++ -*-===//
//
// CPU parts (unit-tested without a GPU): deterministic input generation, the
// comparison against reference outputs, timing statistics.
// GPU parts: `Harness` sits on the executor's device half (BundleKernels,
// runtime/BundleKernels.h): `load` hands it a bundle and the cubin bytes
// loadBundle read, once; each kernel's module is then loaded and each
// contraction's cuBLASLt descriptors built the first time a step needs them
// and reused by every later call, and the kernels' workspaces are one
// allocation, zeroed once. Per step it allocates the tensors the step
// touches (aliases point into their base tensor), fills the inputs (random
// or from BUNDLE/reference/k<N>.safetensors / c<N>.safetensors), runs the
// step once and checks its outputs, then times it (TimingMode):
// back-to-back launches over rotating copies of its buffers (stream, the
// default), or launches one by one between CUDA events (isolated,
// optionally after an L2 flush). Contractions under AlgorithmMode::All also
// time every algorithm GemmRunner::enumerateAlgorithms lists
// (AlgorithmSweep).
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_HARNESS_H
#define DMRT_HARNESS_H

#include "runtime/Bundle.h"
#include "runtime/BundleKernels.h"
#include "runtime/Comparison.h"
#include "runtime/CudaDriver.h"
#include "runtime/GemmRunner.h"
#include "runtime/Safetensors.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dmrt {

//===--- CPU parts --------------------------------------------------------===//


/// Deterministic inputs: element i of stream `stream` (the tensor id) under
/// `seed`, drawn as runtime/ReferenceData.h says (floats in [-1, 1), integers
/// in [1, intMax]) and rounded to `dtype`. Returns the tensor's bytes.
std::vector<uint8_t> makeInput(uint64_t seed, uint32_t stream, DType dtype,
                               int64_t numElements, int64_t intMax = 1);
/// The same values as doubles (before rounding to the dtype).
double inputValue(uint64_t seed, uint32_t stream, DType dtype, int64_t index,
                  int64_t intMax = 1);

/// The relative tolerance rtol of an output of type `outputType`: 2^-7 for
/// bf16, 2^-9 for f16, 1e-4 for f32/f64, 0 (exact) for integers. Kernels
/// compute in fp32 (reductions, softmax, layernorm statistics included) and
/// round once to the output type, as the interpreter's fp32 result is; the
/// rounding alone is up to 2^-9 |x| (bf16) / 2^-11 |x| (f16), and fp32
/// differences (summation order, the hardware exp2 and erf of
/// codegen/CudaPrelude.h) stay below 1e-5 of the tensor's scale, so rtol is
/// 4 x the 16-bit rounding, 10 x the fp32 differences.
double defaultTolerance(DType outputType);


/// How output `name` (e.g. "out0") of reference file `path` is stored: every
/// `stride`-th element of the output's `numElements` (runtime/ReferenceData.h
/// referenceStride), `stored` of them. Reads metadata `stride.<name>` (a
/// positive integer; absent: 1) and `count.<name>` (optional; must be
/// numElements) and checks that stored = ceil(numElements / stride). False
/// with an error naming the file, the field and the value otherwise.
bool referenceSampling(const TensorFile &ref, const std::string &path,
                       const std::string &name, int64_t numElements,
                       int64_t stored, int64_t &stride, std::string &error);

/// What --reference does with one step, from its reference file.
struct ReferenceLookup {
  enum Kind { Check, Skipped, Error } kind = Error;
  /// Skipped: the compiler's reason; Error: what is wrong, naming the file
  /// (the caller adds the step's name).
  std::string message;
};
/// Step `prefix``id` ('k' kernel, 'c' contraction) whose reference file is
/// `path` (`exists`; `file`: its contents, when read). Check: the file has
/// data. Skipped: a contraction the compiler recorded as skipped (metadata
/// `skipped`, no tensors; above its flop limit). Error: no file (every step
/// has one, a record at least), a kernel recorded as skipped, or a record
/// that also holds tensors.
ReferenceLookup lookupReference(char prefix, int64_t id, const std::string &path,
                                bool exists, const TensorFile *file);

struct TimingStats {
  double medianUs = 0, minUs = 0, maxUs = 0;
  int reps = 0;
};
/// From per-rep times in microseconds (median of an even count: the mean of
/// the two middle values).
TimingStats summarizeTimes(std::vector<double> us);

/// Parses a decimal uint64 ("seed" metadata); false on anything else.
bool parseU64(const std::string &s, uint64_t &out);

/// How a step is timed.
enum class TimingMode {
  /// Back-to-back launches on one stream, each on the next of R copies of the
  /// step's tensors ("buffer sets"), so that no launch finds its data in L2
  /// and launch latency hides behind the previous launch: the bandwidth a
  /// kernel gets inside a layer.
  Stream,
  /// One launch between two events, [after an L2 flush]: latency included.
  Isolated,
};
/// "stream" / "isolated".
const char *timingModeName(TimingMode m);
bool parseTimingMode(const std::string &s, TimingMode &out);

/// Buffer sets R of stream timing: ceil(4 x l2Bytes / footprintBytes)
/// clamped to [1, 64] (R sets together are at least 4x the L2), then reduced
/// so that the R - 1 extra sets of `setBytes` each leave 1 GiB of
/// `freeBytes` free (freeBytes < 0: unknown, no limit). At least 1.
int streamBufferSets(int64_t l2Bytes, int64_t footprintBytes, int64_t setBytes,
                     int64_t freeBytes);
/// Launches per timed sample K: the smallest multiple of `sets` that is
/// >= 20, so each sample visits every set equally and hides launch latency.
int streamLaunchesPerSample(int sets);
/// Timed samples of stream timing: max(ceil(reps / K), min(reps, 7)).
int streamSamples(int reps, int launchesPerSample);

/// The "same-size copy" of a step: a device-to-device cudaMemcpyAsync of
/// stepBytes / 2 bytes, so that its read + write traffic is the step's bytes,
/// timed the way the step is (stream: rotating source/destination pairs, R,
/// K and samples as for a step; isolated: the same warm-up, reps and flush).
/// It is the fair reference for small steps, whose fixed per-launch costs
/// make the 1 GiB copy bandwidth out of reach. 0: no copy (stepBytes < 2).
int64_t sameSizeCopyBytes(int64_t stepBytes);
/// 100 x copyUs / stepUs: the step's bandwidth as a percentage of that of
/// its same-size copy; 0 when either time is not > 0 (not measured).
double pctSameSizeCopy(double copyUs, double stepUs);

struct OutputCheck {
  int64_t tensor = -1;
  std::string name; // "out<k>" and the tensor's name
  int64_t stride = 1; // every stride-th element was compared (1: all)
  Comparison cmp;     // its worstIndex: an element of the whole tensor
};

/// Which cuBLASLt algorithms a contraction times.
enum class AlgorithmMode {
  /// The heuristic's best alone (checked and timed).
  Heuristic,
  /// The heuristic's best as above, then every algorithm of
  /// GemmRunner::enumerateAlgorithms (the heuristic's top
  /// HarnessOptions::topAlgorithms and enumerated configurations, at most
  /// maxAlgorithms), each timed as the step with sweepReps repetitions.
  All,
};
/// "heuristic" / "all".
const char *algorithmModeName(AlgorithmMode m);
bool parseAlgorithmMode(const std::string &s, AlgorithmMode &out);

/// One algorithm of a sweep: what it is, its time and its check.
struct AlgorithmRun {
  std::string algorithm;   // serializeAlgorithm (runtime/format/GemmAlgoConfig.h)
  std::string description; // describeAlgorithm, with its workspace
  bool heuristic = false;  // from the heuristic's list (rank heuristicRank)
  int heuristicRank = -1;
  double medianUs = 0, minUs = 0; // per launch; 0: it did not run
  /// Its outputs on the step's inputs were compared with the reference
  /// (the step was checked) or, where the compiler skipped the reference,
  /// with the step's own outputs (the heuristic's best, the default
  /// configuration); a failed comparison rejects it.
  bool checked = false, pass = false;
  double worstRatio = 0;   // largest |error| / bound over its outputs
  std::string error;       // why it did not run or was rejected
  float waves = 0;         // cuBLASLt's wavesCount for it (0: not given)
  /// The analytic cost model's time (modelAlgorithmUs, runtime/GemmAlgorithms.h);
  /// < 0 when not modelled (unknown tile, or the entry did not pass).
  double modelUs = -1;
  /// The same model before any entry is timed, its GEMM rate the step's own
  /// (what --prune-algorithms ranks by); < 0 when not modelled.
  double priorModelUs = -1;
};

/// The algorithms one contraction timed under AlgorithmMode::All.
struct AlgorithmSweep {
  bool ran = false;  // a sweep happened (AlgorithmMode::All, contraction)
  int tried = 0;     // algorithms launched: timed + errors
  int heuristic = 0, enumerated = 0; // the list's entries by source
  int errors = 0;    // algorithms that failed to run (not fatal)
  int rejected = 0;  // ran, but their outputs failed the check
  std::string firstError;
  /// Enumeration failed (cuBLAS error): only the heuristic's were timed.
  std::string enumerationError;
  int reps = 0;      // HarnessOptions reps each algorithm was timed with
  /// Median per-launch time of the heuristic's best in the sweep (timed as
  /// every other entry); 0 when it did not run.
  double heuristicUs = 0;
  std::string heuristicAlgorithm;
  /// The fastest entry that passed its check (median per launch); -1 / 0
  /// when none did.
  int bestIndex = -1;
  double bestUs = 0;
  std::string bestAlgorithm; // its description
  bool bestIsHeuristic = false;
  /// What the entries were compared with: "reference" or "default" (the
  /// step's own outputs; the compiler skipped this contraction's reference).
  std::string checkedAgainst;
  std::vector<AlgorithmRun> runs; // one per entry, in the sweep's order
  /// The cost model against the measurement over the passing entries it
  /// models (modelled of them): Spearman's rank correlation, NaN with < 2.
  int modelled = 0;
  double modelRho = 0;
  /// Where the measured fastest of those entries stands in the model's order
  /// (1: the model's first), 0 when none is modelled: the candidates a tuner
  /// pruning to the model's top N would keep.
  int bestModelRank = 0;
  /// HarnessOptions::pruneAlgorithms: the entries enumerated, and those the
  /// cost model left out before timing (pruneByModel; 0 without pruning).
  int considered = 0, pruned = 0;
};
/// Fills the timing fields of `sweep` (tried, errors, rejected, heuristic*,
/// best*, heuristic / enumerated counts) from one time per entry of `algos`
/// (median us; <= 0 or not finite: the entry failed). An entry whose
/// `rejected` flag is set (it ran, its check failed) is counted as rejected
/// and never the best. Ties go to the earlier entry (the heuristic's order
/// first).
void summarizeAlgorithmSweep(const std::vector<GemmAlgorithm> &algos,
                             const std::vector<double> &us,
                             AlgorithmSweep &sweep,
                             const std::vector<bool> &rejected = {});

struct DeviceInfo;
/// Prices every passing entry of `sweep` (a contraction of GEMM `g`, `flop`
/// flop, operands of `elementBytes`) with modelAlgorithmUs: the GEMM rate is
/// the fastest passing entry's measured one, the tiles' feed the L2 copy
/// bandwidth per SM, the reduction's the copy bandwidth; sets each entry's
/// modelUs and the sweep's modelled and modelRho.
void modelSweep(const GemmDescriptor &g, int64_t flop, int elementBytes,
                const DeviceInfo &info, AlgorithmSweep &sweep);
/// The cost model's rates on `info`'s GPU for a GEMM running at
/// `flopPerSecond` (the tiles' feed: the L2 copy bandwidth per SM; the
/// reduction's: the copy bandwidth).
GemmModelRates modelRates(double flopPerSecond, int elementBytes, const DeviceInfo &info);

struct HarnessOptions;
/// Key of the per-Harness cache of same-size copy times: the copy's bytes
/// and what its timing depends on (many steps of a run share sizes).
struct CopyTimingKey {
  int64_t copyBytes = 0;
  TimingMode timing = TimingMode::Stream;
  bool flushL2 = false; // isolated only (false under stream timing)
  int reps = 0, warmup = 0;
  bool operator<(const CopyTimingKey &o) const;
  bool operator==(const CopyTimingKey &o) const;
};
CopyTimingKey copyTimingKey(int64_t stepBytes, const HarnessOptions &opt);

//===--- GPU parts --------------------------------------------------------===//

struct DeviceInfo {
  std::string name;
  int ordinal = 0, smCount = 0, ccMajor = 0, ccMinor = 0;
  int64_t l2Bytes = 0, memoryBytes = 0;
  int driverVersion = 0, runtimeVersion = 0;
  int64_t memClockKhz = 0;     ///< cudaDevAttrMemoryClockRate (0: unknown)
  int64_t cublasLtVersion = 0; ///< cublasLtGetVersion() of the loaded library
  /// Device-to-device cudaMemcpyAsync, median of 10, counting read + write
  /// (2 x size / time), in GB/s; 0 until measured.
  double copyGBs = 0;
  int64_t copyBytes = 0;
  /// The same for copies that fit in the L2 (src + dst = l2Bytes / 4), 50
  /// back to back: the bandwidth the cost model feeds GEMM tiles with; 0
  /// when not measured.
  double l2CopyGBs = 0;
};

struct HarnessOptions {
  /// Isolated: timed launches, after `warmup` untimed ones. Stream: see
  /// streamSamples (warm-up when warmup > 0: max(R, warmup) launches, at
  /// least one round over the buffer sets).
  int reps = 50, warmup = 5;
  TimingMode timing = TimingMode::Stream;
  bool flushL2 = false; // isolated timing only
  uint64_t seed = 0;
  bool reference = false;
  double tolerance = -1; // rtol; < 0: defaultTolerance of each output's dtype
  /// With `reference`: applied to every GPU output before its comparison,
  /// which must then fail (runtime/Comparison.h).
  PlantedFault plantFault = PlantedFault::None;
  int64_t intMax = 1;    // integer inputs without a reference file
  int topAlgorithms = 8; // cuBLASLt heuristic results requested
  /// Contractions: the heuristic's best, or every algorithm (AlgorithmMode).
  AlgorithmMode algorithms = AlgorithmMode::Heuristic;
  int maxAlgorithms = kDefaultMaxAlgorithms; // AlgorithmMode::All: the cap
  /// AlgorithmMode::All: `reps` of each algorithm's timing (min with reps;
  /// stream timing: as many samples, isolated: launches).
  int sweepReps = 5;
  /// AlgorithmMode::All: above 0, only the heuristic's best and the N - 1
  /// other entries the cost model prices lowest are timed and checked (its
  /// GEMM rate: the step's own time); 0: every entry (exhaustive).
  int pruneAlgorithms = 0;
};


struct StepResult {
  BundleStep::Kind kind = BundleStep::Kernel;
  int64_t id = 0;
  std::string name;       // kernel name or contraction equation
  int64_t bytes = 0, flop = 0;
  /// Per launch. Stream timing: time.reps is the number of samples, each
  /// the mean of launchesPerSample back-to-back launches.
  TimingStats time;
  TimingMode timing = TimingMode::Isolated;
  int bufferSets = 1;        // R (stream timing)
  int launchesPerSample = 1; // K (stream timing)
  double gbs = 0;         // bytes / median
  double pctCopy = 0;     // gbs / copy bandwidth * 100
  /// The same-size copy (sameSizeCopyBytes(bytes)), timed as the step: median
  /// per-launch time; 0 when not measured (allocation failed, no bytes).
  double copyUs = 0;
  double pctSameCopy = 0; // pctSameSizeCopy(copyUs, time.medianUs)
  double tflops = 0;      // flop / median
  uint64_t dropoutSeed = 0;
  int algorithms = 0;     // contractions: heuristic results found
  /// Contractions: the algorithm the step ran, the bundle's chosen one
  /// (serialized) where cuBLASLt accepted it, else "heuristic".
  std::string algorithm;
  AlgorithmSweep sweep;   // contractions under AlgorithmMode::All
  bool checked = false;   // outputs were compared with a reference
  /// Not checked because the compiler skipped the reference (its reason);
  /// a sweep still ran and compared its algorithms with these outputs.
  std::string referenceSkipped;
  bool pass = true;
  std::vector<OutputCheck> outputs;
};

enum class StepStatus {
  Ok,          // ran (and passed, when checked)
  Mismatch,    // ran, an output differs from the reference
  BundleError, // the bundle / its reference files are unusable
  Skipped,     // --reference, a contraction the compiler recorded as skipped
               // (error: its reason); nothing ran
  CudaError,   // a CUDA / cuBLAS call failed
};

/// What DeviceInfo says of CUDA device `ordinal` without measuring (name,
/// SMs, compute capability, L2, memory and its clock, driver, runtime and
/// cuBLASLt versions); false with `error` when the properties cannot be read.
bool queryDevice(int ordinal, DeviceInfo &info, std::string &error);

class Harness {
public:
  Harness();
  ~Harness();
  /// Opens device `ordinal`. On failure `noDevice()` tells a missing
  /// driver/GPU (exit 77) from a real error.
  bool open(int ordinal, std::string &error);
  bool noDevice() const { return driver_.noDevice(); }
  const DeviceInfo &device() const { return info_; }

  /// Measures device-to-device copy bandwidth (1 GiB, or less when memory is
  /// short) into device().copyGBs. (Every step also gets its same-size copy
  /// timed: StepResult::copyUs, cached per CopyTimingKey.)
  bool measureCopyBandwidth(std::string &error);

  /// Makes `b` the bundle whose steps run next (kept by reference: it must
  /// outlive the harness's use of it) with the cubin bytes loadBundle read
  /// (`images`), and allocates and zeroes its kernels' workspaces. Replaces
  /// a bundle loaded before. False with `error` on a CUDA failure.
  bool load(const Bundle &b, CubinImages images, std::string &error);

  /// Runs kernel `k` of the loaded bundle; when k.workspaceBytes > 0 it gets
  /// its workspace (zeroed once at load, the same for every launch) as its
  /// parameter after the outputs. A cubin the driver rejects is a
  /// BundleError, any other failed driver call a CudaError, each named with
  /// the driver's error.
  StepStatus runKernel(const Bundle &b, const BundleKernel &k,
                       const HarnessOptions &opt, StepResult &out,
                       std::string &error);
  StepStatus runContraction(const Bundle &b, const BundleContraction &c,
                            const HarnessOptions &opt, StepResult &out,
                            std::string &error);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  CudaDriver driver_;
  DeviceInfo info_;
};

} // namespace dmrt

#endif // DMRT_HARNESS_H
