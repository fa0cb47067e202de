//===- LayerData.cpp - A layer's arguments and results as dmc eval files --===//
#include "runtime/LayerData.h"

#include "runtime/ArgumentData.h"

namespace dmrt {

bool isRunArgument(const BundleTensor &t, bool train) {
  return t.role == TensorRole::Input || t.role == TensorRole::Param ||
         (train && t.role == TensorRole::GradOutput);
}

bool isRunResult(const BundleTensor &t, bool train) {
  return t.role == TensorRole::Output || (train && t.role == TensorRole::Grad);
}

bool gatherArguments(const Bundle &b, const TensorFile *inputs, const std::string &inputsPath,
                     uint64_t seed, bool train, std::vector<Tensor> &out, int &drawn,
                     std::string &error) {
  out.clear();
  drawn = 0;
  if (inputs)
    for (const Tensor &ft : inputs->tensors) {
      bool known = false;
      for (const BundleTensor &t : b.tensors)
        known |= t.name == ft.name && (isRunArgument(t, true) || isResultRole(t.role));
      if (!known) {
        std::string names;
        for (const BundleTensor &t : b.tensors)
          if (isRunArgument(t, train))
            names += " " + t.name;
        error = inputsPath + ": tensor '" + ft.name + "' is not an argument of " + b.model +
                "; its arguments are:" + names;
        return false;
      }
    }
  for (const BundleTensor &t : b.tensors) {
    if (!isRunArgument(t, train))
      continue;
    const Tensor *ft = inputs ? inputs->find(t.name) : nullptr;
    if (!ft) {
      if (!t.hasInit) {
        error = b.dir + ": argument '" + t.name + "' has no init in the manifest (a bundle "
                "before version 4): give it in --inputs";
        return false;
      }
      out.push_back(drawArgument(t, seed));
      ++drawn;
      continue;
    }
    auto dims = inputs->metadata.find("dims." + t.name);
    if (dims != inputs->metadata.end() && dims->second != t.dims) {
      error = inputsPath + ": tensor '" + t.name + "' has dims '" + dims->second +
              "' but the bundle expects '" + t.dims +
              "' (transpose it, or drop the dims." + t.name + " metadata)";
      return false;
    }
    if (ft->shape != t.shape) {
      error = inputsPath + ": tensor '" + t.name + "' has shape " + shapeString(ft->shape) +
              " but the bundle expects " + shapeString(t.shape) + " (dims '" + t.dims + "')";
      return false;
    }
    std::vector<double> values = toDoubles(*ft);
    if (t.dtype != DType::I32)
      for (double &v : values)
        v = double(float(v)); // fp32 first, then the dtype: as dmc eval rounds
    out.push_back(fromDoubles(t.name, t.dtype, t.shape, values));
  }
  return true;
}

bool writeRunFile(const Bundle &b, const std::string &path, const std::vector<Tensor> &args,
                  const std::vector<Tensor> &results,
                  const std::map<std::string, std::string> &metadata, std::string &error) {
  TensorFile file;
  file.metadata = metadata;
  auto add = [&](const Tensor &t) {
    DType type = t.dtype == DType::I32 ? DType::I32 : DType::F32;
    file.tensors.push_back(fromDoubles(t.name, type, t.shape, toDoubles(t)));
    for (const BundleTensor &bt : b.tensors)
      if (bt.name == t.name)
        file.metadata["dims." + t.name] = bt.dims;
  };
  for (const Tensor &t : args)
    add(t);
  for (const Tensor &t : results)
    add(t);
  return writeSafetensors(path, file, error);
}

} // namespace dmrt
