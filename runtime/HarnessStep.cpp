//===- HarnessStep.cpp - Run, check and time one step of a bundle ---------===//
//
// runStep: allocate the tensors of a kernel or contraction (buffer set 0),
// fill the inputs (random or from the reference file), run it once, compare
// its outputs with the reference, then time it, its variants (a
// contraction's other algorithms) and its same-size copy (StreamTiming.cpp).
//
//===----------------------------------------------------------------------===//
#include "runtime/HarnessInternal.h"
#include "runtime/StridedView.h"

#include "runtime/ReferenceData.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sys/stat.h>

namespace dmrt {
namespace detail {

namespace {
/// Most elements of an output a sweep keeps to compare its algorithms with.
constexpr int64_t kBaselineSamples = int64_t(1) << 20;

bool fileExists(const std::string &p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
} // namespace

StepBuffers::~StepBuffers() { freeAll(); }

void StepBuffers::freeAll() {
  for (auto &set : sets)
    for (auto &kv : set)
      cudaFree(kv.second);
  sets.assign(1, {});
}

void *StepBuffers::ptr(size_t set, int64_t id) const {
  const auto &v = view.at(id);
  return static_cast<char *>(sets.at(set).at(v.first)) + v.second;
}

int64_t StepBuffers::setBytes() const {
  int64_t n = 0;
  for (const auto &kv : baseBytes)
    n += static_cast<int64_t>(kv.second);
  return n;
}

StepStatus runStep(const Bundle &b, const StepSpec &spec, TimingContext &tc,
                   const Setup &setup, StepResult &out, std::string &error,
                   const StepVariants *variants) {
  const HarnessOptions &opt = tc.opt;
  cudaStream_t st = tc.stream;
  std::string stepName = std::string(1, spec.prefix) + std::to_string(spec.id);
  // Reference file.
  TensorFile ref;
  bool haveRef = false;
  std::string refPath = b.path("reference/" + stepName + ".safetensors");
  bool refExists = fileExists(refPath);
  if (refExists && !readSafetensors(refPath, ref, error))
    return StepStatus::BundleError;
  haveRef = refExists;
  // Inputs from the reference and outputs compared with it.
  bool referenced = opt.reference;
  if (opt.reference) {
    // Every step has a file: its data, or the compiler's record of a skip.
    ReferenceLookup look =
        lookupReference(spec.prefix, spec.id, refPath, refExists, refExists ? &ref : nullptr);
    if (look.kind == ReferenceLookup::Skipped && variants && variants->algos) {
      // A sweep still runs: its algorithms are compared with the step's own
      // outputs on inputs drawn from the seed.
      referenced = haveRef = false;
      out.referenceSkipped = look.message;
    } else if (look.kind != ReferenceLookup::Check) {
      error = look.message;
      return look.kind == ReferenceLookup::Skipped ? StepStatus::Skipped
                                                   : StepStatus::BundleError;
    }
  }
  out.dropoutSeed = opt.seed;
  if (referenced) {
    auto it = ref.metadata.find("seed");
    if (it != ref.metadata.end() && !parseU64(it->second, out.dropoutSeed)) {
      error = refPath + ": metadata seed \"" + it->second +
              "\" is not an unsigned 64-bit integer";
      return StepStatus::BundleError;
    }
  }
  // Allocation of every base tensor touched (buffer set 0).
  StepBuffers buf;
  auto touch = [&](int64_t id) -> StepStatus {
    int64_t off;
    int64_t base = b.baseOf(id, off);
    buf.view[id] = {base, off * static_cast<int64_t>(dtypeSize(b.tensor(id)->dtype))};
    if (!buf.sets[0].count(base)) {
      const BundleTensor *bt = b.tensor(base);
      void *p = nullptr;
      size_t bytes = std::max<int64_t>(bt->bytes, 1);
      cudaError_t e = cudaMalloc(&p, bytes);
      if (e != cudaSuccess) {
        error = cudaMsg(e, "cudaMalloc") + " for tensor " + bt->name + " (" +
                std::to_string(bytes) + " bytes)";
        return StepStatus::CudaError;
      }
      buf.sets[0][base] = p;
      buf.baseBytes[base] = bytes;
    }
    return StepStatus::Ok;
  };
  for (int64_t id : spec.inputs)
    if (StepStatus s = touch(id); s != StepStatus::Ok)
      return s;
  for (int64_t id : spec.outputs)
    if (StepStatus s = touch(id); s != StepStatus::Ok)
      return s;
  PtrFn ptr = buf.ptrFn(0);
  // Buffer set 0: outputs first get NaN bytes (unwritten elements fail the
  // check), then the inputs are written (they win where an input and an
  // output overlap).
  auto fill = [&]() -> StepStatus {
    for (int64_t id : spec.outputs) {
      const BundleTensor *t = b.tensor(id);
      DMRT_CUDA(cudaMemsetAsync(ptr(id), 0xFF, t->bytes, st));
    }
    for (size_t k = 0; k < spec.inputs.size(); ++k) {
      const BundleTensor *t = b.tensor(spec.inputs[k]);
      std::vector<uint8_t> host;
      std::string refName = "in" + std::to_string(k);
      const Tensor *rt = haveRef ? ref.find(refName) : nullptr;
      if (referenced && !rt && ref.metadata.count("unit")) {
        // Inputs drawn from the seed, as the compiler drew them
        // (runtime/ReferenceData.h).
        uint64_t unit = 0, maxInt = 1, seed = out.dropoutSeed;
        parseU64(ref.metadata["unit"], unit);
        if (ref.metadata.count("max_int"))
          parseU64(ref.metadata["max_int"], maxInt);
        int64_t inputMax = int64_t(maxInt);
        // A bit-field input: any 32-bit word (runtime/ReferenceData.h).
        if (auto it = ref.metadata.find("max_int." + refName); it != ref.metadata.end())
          inputMax = std::strtoll(it->second.c_str(), nullptr, 10);
        std::vector<double> v =
            referenceValues(t->numElements(), seed,
                            referenceStream(uint32_t(unit), uint32_t(k)), !isFloatDType(t->dtype),
                            inputMax);
        host = fromDoubles("", t->dtype, {t->numElements()}, v).bytes;
      } else if (referenced) {
        if (!rt) {
          error = refPath + ": no tensor " + refName + " (input " +
                  std::to_string(k) + ", " + t->name + ")";
          return StepStatus::BundleError;
        }
        if (rt->numElements() != t->numElements()) {
          error = refPath + ": " + refName + " has " +
                  std::to_string(rt->numElements()) + " elements but tensor " +
                  t->name + " has " + std::to_string(t->numElements());
          return StepStatus::BundleError;
        }
        host = rt->dtype == t->dtype
                   ? rt->bytes
                   : fromDoubles("", t->dtype, {t->numElements()}, toDoubles(*rt))
                         .bytes;
      } else {
        int64_t intMax = opt.intMax;
        if (!isFloatDType(t->dtype) && rt) {
          std::vector<double> v = toDoubles(*rt);
          if (!v.empty())
            intMax = static_cast<int64_t>(*std::max_element(v.begin(), v.end()));
        }
        host = makeInput(opt.seed, static_cast<uint32_t>(spec.inputs[k]), t->dtype,
                         t->numElements(), intMax);
      }
      if (!t->aliasStrides.empty()) { // a strided view: its elements into its span
        std::vector<uint8_t> span(size_t(t->spanElements()) * dtypeSize(t->dtype));
        DMRT_CUDA(cudaMemcpy(span.data(), ptr(spec.inputs[k]), span.size(),
                             cudaMemcpyDeviceToHost));
        scatterView(*t, host.data(), span.data());
        host = std::move(span);
      }
      DMRT_CUDA(cudaMemcpyAsync(ptr(spec.inputs[k]), host.data(), host.size(),
                                cudaMemcpyHostToDevice, st));
      DMRT_CUDA(cudaStreamSynchronize(st)); // `host` dies here
    }
    return StepStatus::Ok;
  };
  if (StepStatus s = fill(); s != StepStatus::Ok)
    return s;
  Launch launch;
  if (StepStatus s = setup(ptr, out.dropoutSeed, launch, error);
      s != StepStatus::Ok)
    return s;
  // The checked run.
  if (!launch(error))
    return StepStatus::CudaError;
  DMRT_CUDA(cudaStreamSynchronize(st));
  DMRT_CUDA(cudaGetLastError());
  // Output k of set 0, every stride-th element (the planted fault applied
  // when `plant`).
  auto readSampled = [&](size_t k, int64_t stride, bool plant,
                         std::vector<double> &values) -> StepStatus {
    const BundleTensor *t = b.tensor(spec.outputs[k]);
    Tensor got;
    got.dtype = t->dtype;
    got.shape = {t->numElements()};
    if (t->aliasStrides.empty()) {
      got.bytes.resize(t->bytes);
      DMRT_CUDA(cudaMemcpy(got.bytes.data(), ptr(spec.outputs[k]), t->bytes,
                           cudaMemcpyDeviceToHost));
    } else { // a strided view: its span, its elements gathered
      std::vector<uint8_t> span(size_t(t->spanElements()) * dtypeSize(t->dtype));
      DMRT_CUDA(cudaMemcpy(span.data(), ptr(spec.outputs[k]), span.size(),
                           cudaMemcpyDeviceToHost));
      got.bytes = gatherView(*t, span.data());
    }
    std::vector<double> all = toDoubles(got);
    if (plant)
      plantFault(all, opt.plantFault);
    values = referenceSample(all, stride);
    return StepStatus::Ok;
  };
  // Compares the outputs of set 0 with the reference.
  auto check = [&](std::vector<OutputCheck> &checks, bool &pass) -> StepStatus {
    for (size_t k = 0; k < spec.outputs.size(); ++k) {
      const BundleTensor *t = b.tensor(spec.outputs[k]);
      std::string refName = "out" + std::to_string(k);
      const Tensor *rt = ref.find(refName);
      if (!rt) {
        error = refPath + ": no tensor " + refName + " (output " +
                std::to_string(k) + ", " + t->name + ")";
        return StepStatus::BundleError;
      }
      // Large outputs are referenced every `stride`-th element.
      int64_t stride = 1;
      if (!referenceSampling(ref, refPath, refName, t->numElements(),
                             rt->numElements(), stride, error))
        return StepStatus::BundleError;
      std::vector<double> gotValues;
      if (StepStatus s = readSampled(k, stride, true, gotValues); s != StepStatus::Ok)
        return s;
      OutputCheck oc;
      oc.tensor = t->id;
      oc.name = refName + " (" + t->name + ")";
      // A rounding the kernel does and the interpreter cannot: its bound.
      std::vector<double> spread;
      if (const Tensor *st = ref.find("spread." + refName)) {
        spread = toDoubles(*st);
        if (spread.size() != size_t(rt->numElements())) {
          error = refPath + ": spread." + refName + " has " + std::to_string(spread.size()) +
                  " elements, " + refName + " " + std::to_string(rt->numElements());
          return StepStatus::BundleError;
        }
      }
      oc.cmp = compareOutput(toDoubles(*rt), gotValues,
                             opt.tolerance >= 0 ? opt.tolerance
                                                : defaultTolerance(t->dtype),
                             spread.empty() ? nullptr : &spread);
      oc.stride = stride;
      if (oc.cmp.worstIndex > 0) // sample -> element of the tensor
        oc.cmp.worstIndex *= oc.stride;
      pass &= oc.cmp.pass;
      checks.push_back(oc);
    }
    return StepStatus::Ok;
  };
  if (referenced) {
    out.checked = true;
    if (StepStatus s = check(out.outputs, out.pass); s != StepStatus::Ok)
      return s;
  }
  // Without a reference, what a sweep's algorithms are compared with: the
  // step's own outputs (the default configuration's), sampled.
  std::vector<std::vector<double>> baseline(spec.outputs.size());
  std::vector<int64_t> baselineStride(spec.outputs.size(), 1);
  if (variants && variants->algos && !referenced)
    for (size_t k = 0; k < spec.outputs.size(); ++k) {
      int64_t n = b.tensor(spec.outputs[k])->numElements();
      baselineStride[k] = std::max<int64_t>(1, (n + kBaselineSamples - 1) / kBaselineSamples);
      if (StepStatus s = readSampled(k, baselineStride[k], false, baseline[k]);
          s != StepStatus::Ok)
        return s;
    }
  // Timing.
  out.timing = opt.timing;
  std::set<int64_t> touched(spec.inputs.begin(), spec.inputs.end());
  touched.insert(spec.outputs.begin(), spec.outputs.end());
  int64_t footprint = 0;
  for (int64_t id : touched)
    footprint += b.tensor(id)->bytes;
  StepStatus ts;
  if (opt.timing == TimingMode::Isolated)
    ts = timeIsolated(launch, tc, out, error);
  else
    ts = timeStream(buf, footprint, setup, out.dropoutSeed, tc, out, error,
                    /*asGraph=*/spec.prefix == 'c');
  if (ts != StepStatus::Ok)
    return ts;
  // The variants, on the same buffers; then each one's outputs checked.
  if (variants && variants->algos && variants->sweep) {
    AlgorithmSweep &sw = *variants->sweep;
    if (variants->beforeTiming)
      variants->beforeTiming(out.time.medianUs);
    const std::vector<GemmAlgorithm> &algos = *variants->algos;
    std::vector<double> us;
    if (StepStatus s = timeVariants(buf, footprint, *variants, out.dropoutSeed,
                                    tc, us, sw, error);
        s != StepStatus::Ok)
      return s;
    sw.checkedAgainst = referenced ? "reference" : "default";
    std::vector<bool> rejected(algos.size(), false);
    bool readsOutput = std::any_of(spec.outputs.begin(), spec.outputs.end(), [&](int64_t id) {
      return std::find(spec.inputs.begin(), spec.inputs.end(), id) != spec.inputs.end();
    });
    for (size_t i = 0; i < algos.size(); ++i) {
      AlgorithmRun &run = sw.runs[i];
      run.algorithm = serializeAlgorithm(algos[i].config);
      run.description = algos[i].description;
      run.heuristic = algos[i].source == GemmAlgoSource::Heuristic;
      run.heuristicRank = algos[i].heuristicRank;
      run.waves = algos[i].waves;
      if (!(run.medianUs > 0)) {
        run.error = "did not run";
        continue;
      }
      // Set 0 again: NaN outputs (inputs drawn again where an output is
      // also read), this algorithm run once, its outputs compared.
      if (readsOutput) {
        if (StepStatus s = fill(); s != StepStatus::Ok)
          return s;
      } else {
        for (int64_t id : spec.outputs)
          DMRT_CUDA(cudaMemsetAsync(ptr(id), 0xFF, b.tensor(id)->bytes, st));
      }
      Launch l;
      std::string err;
      if (variants->setup(i)(ptr, out.dropoutSeed, l, err) != StepStatus::Ok || !l(err)) {
        DMRT_CUDA(cudaStreamSynchronize(st));
        cudaGetLastError();
        run.error = "the checked run failed: " + err;
        rejected[i] = true;
        continue;
      }
      DMRT_CUDA(cudaStreamSynchronize(st));
      DMRT_CUDA(cudaGetLastError());
      run.checked = true;
      run.pass = true;
      std::vector<OutputCheck> checks;
      if (referenced) {
        if (StepStatus s = check(checks, run.pass); s != StepStatus::Ok)
          return s;
      } else {
        for (size_t k = 0; k < spec.outputs.size(); ++k) {
          OutputCheck oc;
          std::vector<double> got;
          if (StepStatus s = readSampled(k, baselineStride[k], true, got); s != StepStatus::Ok)
            return s;
          oc.name = "out" + std::to_string(k);
          oc.cmp = compareOutput(baseline[k], got,
                                 opt.tolerance >= 0 ? opt.tolerance
                                                    : defaultTolerance(b.tensor(spec.outputs[k])->dtype));
          run.pass &= oc.cmp.pass;
          checks.push_back(oc);
        }
      }
      for (const OutputCheck &oc : checks) {
        run.worstRatio = std::max(run.worstRatio, oc.cmp.maxRatio);
        if (!oc.cmp.pass && run.error.empty())
          run.error = oc.name + ": " + describeComparison(oc.cmp);
      }
      rejected[i] = !run.pass;
    }
    summarizeAlgorithmSweep(algos, us, sw, rejected);
  }
  if (out.time.medianUs > 0) {
    out.gbs = out.bytes / (out.time.medianUs * 1e3);
    out.tflops = out.flop / (out.time.medianUs * 1e6);
    out.pctCopy = tc.info.copyGBs > 0 ? 100.0 * out.gbs / tc.info.copyGBs : 0;
    // The copy moving the same bytes, timed the same way, once the step's
    // buffers are freed (its pairs need the memory; 0 when it cannot run).
    buf.freeAll();
    out.copyUs = sameSizeCopyUs(out.bytes, tc);
    out.pctSameCopy = pctSameSizeCopy(out.copyUs, out.time.medianUs);
  }
  return out.pass ? StepStatus::Ok : StepStatus::Mismatch;
}

} // namespace detail
} // namespace dmrt
