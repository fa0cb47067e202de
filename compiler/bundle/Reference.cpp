//===- Reference.cpp - per-kernel reference data for GPU validation -------===//
#include "compiler/bundle/Reference.h"

#include "compiler/HostKernels.h"
#include "compiler/Interpreter.h"
#include "compiler/bundle/SampledContraction.h"
#include "ir/IterationSpace.h"
#include "ir/StorageType.h"
#include "runtime/ReferenceData.h"
#include "runtime/Safetensors.h"

#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Parallel.h"

#include <algorithm>
#include <cmath>

using namespace mlir;

namespace dmc::bundle {
namespace {

/// The dtype `t` is stored in (runtime/format/DType.h).
dmrt::DType dtypeOf(Type t) { return dm::storageDType(t).value_or(dmrt::DType::F32); }

/// A reference input (runtime/ReferenceData.h), rounded to its storage type
/// so that the GPU reads exactly these values.
HostTensor draw(Type type, uint64_t seed, uint32_t stream, int64_t maxInt) {
  HostTensor t = allocateFor(type);
  bool integer = isa<IntegerType>(cast<dm::TensorType>(type).getElementType());
  // The stream in blocks spread over the host's cores.
  constexpr int64_t kBlock = 1 << 16;
  const int64_t n = int64_t(t.data.size());
  llvm::parallelFor(0, size_t((n + kBlock - 1) / kBlock), [&](size_t b) {
    dmrt::referenceRange(t.data.data(), int64_t(b) * kBlock, std::min(n, int64_t(b + 1) * kBlock),
                         seed, stream, integer, maxInt);
  });
  dmrt::Tensor stored = dmrt::fromDoubles("t", dtypeOf(type), t.shape, t.data);
  t.data = dmrt::toDoubles(stored);
  return t;
}

/// The unit roundoff of element type `t`: half the spacing of its values
/// at 1 (bf16 2^-8, f16 2^-11, f32 2^-24).
double roundingUnit(Type t) {
  if (t.isBF16())
    return std::ldexp(1.0, -8);
  if (t.isF16())
    return std::ldexp(1.0, -11);
  return std::ldexp(1.0, -24);
}

/// The outputs of contraction `c` without the interpreter (SampledContraction.h):
/// result 0 only at the elements the file stores, a bias gradient in full.
std::vector<HostTensor> sampledOutputs(dm::ContractOp c, const std::vector<HostTensor> &inputs,
                                       int64_t samples) {
  const HostTensor *bias = nullptr;
  for (auto [k, v] : llvm::enumerate(c->getOperands()))
    if (v == c.getBias())
      bias = &inputs[k];
  std::vector<HostTensor> outputs;
  auto type = cast<dm::TensorType>(c.getResult().getType());
  HostTensor d; // dims and shape only: the full output is never held
  d.dims = type.getNames().str();
  d.shape.assign(type.getShape().begin(), type.getShape().end());
  int64_t stride = dmrt::referenceStride(HostTensor::numElements(d.shape), samples);
  d.data = sampledContract(inputs[0], inputs[1], c.getScale().convertToDouble(),
                           c.getEpilogueKind(), bias, d, stride);
  outputs.push_back(std::move(d));
  if (c->getNumResults() > 1) { // BGradA / BGradB: the sum of one operand
    HostTensor g = allocateFor(c->getResult(1).getType());
    HostKernels<double>::reduceSum(inputs[c.getEpilogueKind() == dmrt::Epilogue::BGradA ? 0 : 1],
                                   g);
    outputs.push_back(std::move(g));
  }
  return outputs;
}

/// What a step's reference file depends on: the op as printed (its region,
/// types and attributes; operands by type only), its unit and the options.
std::string cacheKey(Operation *op, uint32_t unit, const ReferenceOptions &options,
                     bool sampled) {
  std::string key;
  llvm::raw_string_ostream os(key);
  op->print(os, OpPrintingFlags().printGenericOpForm().useLocalScope());
  os << "|unit " << unit << "|seed " << options.seed << "|samples " << options.samples
     << "|flop limit " << llvm::formatv("{0:e}", options.flopLimit) << "|sampled " << sampled;
  return key;
}

llvm::Error writeComputed(Operation *op, const std::string &path,
                          const ReferenceOptions &options, uint32_t unit, bool sampled);

/// Writes the reference of `op` to `path`, copying an identical step's file
/// when options.cache has one.
llvm::Error writeOne(Operation *op, const std::string &path, const ReferenceOptions &options,
                     uint32_t unit, bool sampled = false) {
  if (!options.cache)
    return writeComputed(op, path, options, unit, sampled);
  const std::string key = cacheKey(op, unit, options, sampled);
  if (std::string from = options.cache->find(key); !from.empty()) {
    if (std::error_code ec = llvm::sys::fs::copy_file(from, path))
      return llvm::createStringError(ec, "copying the reference " + from + " to " + path +
                                             ": " + ec.message());
    options.cache->hit();
    return llvm::Error::success();
  }
  if (llvm::Error e = writeComputed(op, path, options, unit, sampled))
    return e;
  options.cache->add(key, path);
  return llvm::Error::success();
}

llvm::Error writeComputed(Operation *op, const std::string &path,
                          const ReferenceOptions &options, uint32_t unit, bool sampled) {
  int64_t maxInt = 1;
  for (char c : dm::iterationDims(op))
    maxInt = std::max(maxInt, dm::dimSize(op, c));
  if (auto kernel = dyn_cast<dm::KernelOp>(op))
    for (Operation &inner : kernel.getBody().front())
      for (char c : dm::iterationDims(&inner))
        maxInt = std::max(maxInt, dm::dimSize(&inner, c));
  std::vector<HostTensor> inputs;
  std::vector<bool> bitFields(op->getNumOperands(), false);
  if (auto kernel = dyn_cast<dm::KernelOp>(op))
    for (auto [k, arg] : llvm::enumerate(kernel.getBody().getArguments()))
      bitFields[k] = !arg.use_empty() && llvm::all_of(arg.getUsers(), [&](Operation *u) {
        auto apply = dyn_cast<dm::DropoutApplyBitsOp>(u);
        return apply && apply.getBits() == arg; // not the values it drops
      });
  for (auto [k, v] : llvm::enumerate(op->getOperands()))
    inputs.push_back(draw(v.getType(), options.seed, dmrt::referenceStream(unit, k),
                          bitFields[k] ? -1 : maxInt));
  InterpreterOptions interpreter{Precision::F32, options.seed};
  interpreter.roundKernelOperands = true; // as a fused kernel's tensor cores read them
  std::vector<HostTensor> spreads;
  interpreter.roundingSpreads = &spreads;
  auto outputs = sampled ? llvm::Expected<std::vector<HostTensor>>(sampledOutputs(
                               cast<dm::ContractOp>(op), inputs, options.samples))
                         : interpretOp(op, inputs, interpreter);
  if (!outputs)
    return outputs.takeError();
  // Inputs are redrawn on the GPU from the seed; outputs are stored in fp32
  // (integers as i32), sampled when large.
  dmrt::TensorFile file;
  file.metadata["seed"] = std::to_string(options.seed);
  file.metadata["unit"] = std::to_string(unit);
  file.metadata["max_int"] = std::to_string(maxInt);
  for (auto [k, v] : llvm::enumerate(op->getOperands())) {
    file.metadata["dims.in" + std::to_string(k)] = inputs[k].dims;
    if (bitFields[k]) // keep bits: every bit of a word drawn (runtime/ReferenceData.h)
      file.metadata["max_int.in" + std::to_string(k)] = "-1";
  }
  for (auto [k, r] : llvm::enumerate(op->getResults())) {
    const HostTensor &t = (*outputs)[k];
    std::string name = "out" + std::to_string(k);
    int64_t count = HostTensor::numElements(t.shape);
    int64_t stride = dmrt::referenceStride(count, options.samples);
    bool presampled = sampled && k == 0; // sampledOutputs computed only these
    std::vector<double> values = presampled ? t.data : dmrt::referenceSample(t.data, stride);
    // Integer outputs (keep bits: 32-bit words) exactly, as I32.
    bool integer = isa<IntegerType>(cast<dm::TensorType>(r.getType()).getElementType());
    file.tensors.push_back(dmrt::fromDoubles(name, integer ? dmrt::DType::I32 : dmrt::DType::F32,
                                             {int64_t(values.size())}, values));
    file.metadata["dims." + name] = t.dims;
    file.metadata["stride." + name] = std::to_string(stride);
    file.metadata["count." + name] = std::to_string(count);
    if (spreads.size() > size_t(k) && !spreads[k].data.empty()) {
      // A rounding the kernel does and the interpreter cannot: each product
      // off by a relative error <= u (unit roundoff of the element type),
      // independently; 4 u x the spread is about 7 standard deviations of
      // their sum (u / sqrt(3) each at most).
      double u = roundingUnit(cast<dm::TensorType>(r.getType()).getElementType());
      std::vector<double> bound = dmrt::referenceSample(spreads[k].data, stride);
      for (double &x : bound)
        x *= 4 * u;
      file.tensors.push_back(dmrt::fromDoubles("spread." + name, dmrt::DType::F32,
                                               {int64_t(bound.size())}, bound));
    }
  }
  std::string error;
  if (!dmrt::writeSafetensors(path, file, error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  return llvm::Error::success();
}

} // namespace

std::string ReferenceCache::find(const std::string &key) const {
  auto it = files_.find(key);
  return it == files_.end() || !llvm::sys::fs::exists(it->second) ? "" : it->second;
}

llvm::Error writeReferences(const std::vector<dm::KernelOp> &kernels,
                            const std::vector<dm::ContractOp> &contractions,
                            llvm::StringRef dir, const ReferenceOptions &options,
                            llvm::raw_ostream &log) {
  auto wanted = [&](const char *prefix, size_t n) {
    return options.only.empty() || options.only.count(prefix + std::to_string(n));
  };
  const size_t hitsBefore = options.cache ? options.cache->hits() : 0;
  size_t kernelsWritten = 0;
  for (size_t n = 0; n < kernels.size(); ++n) {
    if (!wanted("k", n))
      continue;
    if (llvm::Error e = writeOne(kernels[n], llvm::formatv("{0}/reference/k{1}.safetensors", dir, n),
                                 options, uint32_t(n)))
      return e;
    ++kernelsWritten;
  }
  int written = 0, skipped = 0, sampled = 0;
  for (size_t n = 0; n < contractions.size(); ++n) {
    if (!wanted("c", n))
      continue;
    dm::ContractOp c = contractions[n];
    double flop = dm::analyticFlop(cast<dm::IterationSpaceOpInterface>(c.getOperation()));
    // Above the limit, only the stored elements when those are within it.
    int64_t count = cast<dm::TensorType>(c.getResult().getType()).getNumElements();
    int64_t stored =
        dmrt::referenceSampleCount(count, dmrt::referenceStride(count, options.samples));
    bool sample = flop > options.flopLimit && flop * double(stored) / double(count) <=
                                                  options.flopLimit;
    if (flop > options.flopLimit && !sample) {
      // A record instead of the data: the harness lists it as skipped, and a
      // missing file stays an error.
      dmrt::TensorFile file;
      file.metadata["unit"] = std::to_string(1000 + n);
      file.metadata["flop"] = llvm::formatv("{0:e}", flop).str();
      file.metadata["flop_limit"] = llvm::formatv("{0:e}", options.flopLimit).str();
      file.metadata["skipped"] =
          llvm::formatv("dmc compile --reference computes contractions of at most {0:e} "
                        "flop on the CPU (above it, the stored elements alone if they are "
                        "within it); this one has {1:e}",
                        options.flopLimit, flop)
              .str();
      std::string error;
      if (!dmrt::writeSafetensors(llvm::formatv("{0}/reference/c{1}.safetensors", dir, n),
                                  file, error))
        return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
      ++skipped;
      continue;
    }
    if (llvm::Error e = writeOne(c, llvm::formatv("{0}/reference/c{1}.safetensors", dir, n),
                                 options, uint32_t(1000 + n), sample))
      return e;
    ++written;
    sampled += sample;
  }
  log << "dmc compile: reference data for " << kernelsWritten << " of " << kernels.size()
      << " kernels and " << written << " of " << contractions.size() << " contractions (seed "
      << options.seed << ")";
  if (sampled)
    log << "; " << sampled << " of them above the flop limit, computed at the stored elements "
        << "only";
  if (skipped)
    log << "; " << skipped << " above the flop limit "
        << llvm::formatv("{0:e}", options.flopLimit)
        << " recorded as skipped (metadata `skipped`)";
  if (options.cache && options.cache->hits() > hitsBefore)
    log << "; " << options.cache->hits() - hitsBefore
        << " copied from an identical step's file written before";
  log << "\n";
  return llvm::Error::success();
}

} // namespace dmc::bundle
