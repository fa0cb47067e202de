//===- TensorIO.cpp - layer arguments from seeds and safetensors files ----===//
#include "compiler/TensorIO.h"

#include "ir/Signature.h"

#include "runtime/ReferenceData.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace dmc {
namespace {

/// `v` as the interpreter holds an argument of type `type` in precision `p`.
double roundTo(Precision p, Type type, double v) {
  if (p == Precision::Storage)
    return roundToElementType(v, cast<dm::TensorType>(type).getElementType());
  return p == Precision::F32 ? static_cast<double>(static_cast<float>(v)) : v;
}

bool isInteger(Type type) {
  return isa<IntegerType>(cast<dm::TensorType>(type).getElementType());
}

double attrOr(func::FuncOp f, unsigned index, llvm::StringRef name, double fallback) {
  Attribute a = f.getArgAttr(index, name);
  if (auto fa = dyn_cast_or_null<FloatAttr>(a))
    return fa.getValueAsDouble();
  if (auto ia = dyn_cast_or_null<IntegerAttr>(a))
    return static_cast<double>(ia.getInt());
  return fallback;
}

llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

} // namespace

ArgumentInit argumentInit(func::FuncOp f, unsigned index) {
  return {attrOr(f, index, dm::kInitMeanAttr, 0.0), attrOr(f, index, dm::kInitRangeAttr, 1.0),
          static_cast<int64_t>(attrOr(f, index, dm::kInitMaxAttr, 1.0))};
}

HostTensor generateArgument(func::FuncOp f, unsigned index, uint64_t seed,
                            Precision precision) {
  Type type = f.getArgument(index).getType();
  HostTensor t = allocateFor(type);
  uint32_t stream = dmrt::argumentStream(dm::argName(f, index).str());
  bool integer = isInteger(type);
  ArgumentInit init = argumentInit(f, index);
  double mean = init.mean, range = init.range;
  int64_t max = init.max;
  for (size_t e = 0; e < t.data.size(); ++e) {
    double v = dmrt::referenceValue(e, seed, stream, integer, max);
    t.data[e] = integer ? v : roundTo(precision, type, mean + range * v);
  }
  return t;
}

llvm::Error readArguments(func::FuncOp f, llvm::StringRef path, Precision precision,
                          std::vector<HostTensor> &args, std::vector<bool> &provided) {
  dmrt::TensorFile file;
  std::string error;
  if (!dmrt::readSafetensors(path.str(), file, error))
    return fail(error);
  for (const dmrt::Tensor &tensor : file.tensors) {
    int found = -1;
    for (unsigned n = 0; n < f.getNumArguments(); ++n)
      if (dm::argName(f, n) == tensor.name)
        found = static_cast<int>(n);
    bool isResult = false;
    for (unsigned n = 0; n < f.getNumResults(); ++n)
      isResult |= dm::resultName(f, n) == tensor.name;
    if (found < 0 && isResult)
      continue; // an earlier run's output: its results are recomputed
    if (found < 0) {
      std::string names;
      for (unsigned n = 0; n < f.getNumArguments(); ++n)
        names += " " + dm::argName(f, n).str();
      return fail(llvm::formatv("{0}: tensor '{1}' is not an argument of @{2}; its "
                                "arguments are:{3}",
                                path, tensor.name, f.getSymName(), names));
    }
    HostTensor expected = allocateFor(f.getArgument(found).getType());
    auto dims = file.metadata.find("dims." + tensor.name);
    if (dims != file.metadata.end() && dims->second != expected.dims)
      return fail(llvm::formatv("{0}: tensor '{1}' has dims '{2}' but @{3} expects '{4}' "
                                "(transpose it, or drop the dims.{1} metadata)",
                                path, tensor.name, dims->second, f.getSymName(),
                                expected.dims));
    if (tensor.shape != expected.shape)
      return fail(llvm::formatv("{0}: tensor '{1}' has shape [{2}] but @{3} expects [{4}] "
                                "(dims '{5}')",
                                path, tensor.name, llvm::make_range(tensor.shape.begin(),
                                                                     tensor.shape.end()),
                                f.getSymName(),
                                llvm::make_range(expected.shape.begin(), expected.shape.end()),
                                expected.dims));
    std::vector<double> values = dmrt::toDoubles(tensor);
    Type type = f.getArgument(found).getType();
    if (!isInteger(type))
      for (double &v : values)
        v = roundTo(precision, type, v);
    expected.data = std::move(values);
    args[found] = std::move(expected);
    provided[found] = true;
  }
  return llvm::Error::success();
}

llvm::Error writeValues(func::FuncOp f, llvm::StringRef path,
                        const std::vector<HostTensor> &args,
                        const std::vector<HostTensor> &results, Precision precision,
                        const std::map<std::string, std::string> &metadata) {
  dmrt::TensorFile file;
  file.metadata = metadata;
  // Storage precision too is written as F32 (its values are exactly
  // representable there), so that readers can check the rounding.
  dmrt::DType floatType = precision == Precision::F64 ? dmrt::DType::F64 : dmrt::DType::F32;
  auto add = [&](llvm::StringRef name, Type type, const HostTensor &t) {
    dmrt::DType dtype = isInteger(type) ? dmrt::DType::I32 : floatType;
    file.tensors.push_back(dmrt::fromDoubles(name.str(), dtype, t.shape, t.data));
    file.metadata["dims." + name.str()] = t.dims;
  };
  for (unsigned n = 0; n < f.getNumArguments(); ++n)
    add(dm::argName(f, n), f.getArgument(n).getType(), args[n]);
  for (unsigned n = 0; n < f.getNumResults(); ++n)
    add(dm::resultName(f, n), f.getResultTypes()[n], results[n]);
  std::string error;
  if (!dmrt::writeSafetensors(path.str(), file, error))
    return fail(error);
  return llvm::Error::success();
}

} // namespace dmc
