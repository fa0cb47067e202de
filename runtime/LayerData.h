//===- LayerData.h - A layer's arguments and results as dmc eval files -*- C++ -*-===//
//
// dmc-run's file conventions, the same as `dmc eval` (compiler/dmc.cpp,
// compiler/TensorIO.cpp) so that a GPU run and an interpreter run compare
// tensor by tensor:
//  - the arguments are the bundle's tensors of role input and param, and
//    grad_output when training; each comes from the inputs file when it has
//    a tensor of that name (its shape must match; metadata dims.<name>, when
//    present, must equal the bundle's dims), else it is drawn from the seed
//    (runtime/ArgumentData.h). File values are rounded to fp32, then to the
//    tensor's dtype, as `dmc eval --precision storage` rounds them. A file
//    tensor named like a result (an earlier run's output), or dy without
//    `train`, is skipped; any other unknown name is an error listing the
//    arguments;
//  - the output file holds every argument (the values used) and every
//    result (output, and grad when training), floats as F32, integers as
//    I32, with metadata dims.<name> and the caller's (seed, model, ...).
// CPU only: no device call.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_LAYERDATA_H
#define DMRT_LAYERDATA_H

#include "runtime/Bundle.h"
#include "runtime/Safetensors.h"

#include <map>
#include <string>
#include <vector>

namespace dmrt {

/// Whether tensor `t` is an argument of a run (`train`: with grad_output).
bool isRunArgument(const BundleTensor &t, bool train);
/// Whether tensor `t` is a result of a run (`train`: with gradients).
bool isRunResult(const BundleTensor &t, bool train);

/// The arguments of `b`, in manifest order, in their dtypes. `inputs` may
/// be null (everything drawn). `drawn` counts the tensors drawn from `seed`.
bool gatherArguments(const Bundle &b, const TensorFile *inputs, const std::string &inputsPath,
                     uint64_t seed, bool train, std::vector<Tensor> &out, int &drawn,
                     std::string &error);

/// Writes `args` and `results` (in their dtypes) to `path` as `dmc eval`
/// does: floats as F32, dims.<name> metadata plus `metadata`.
bool writeRunFile(const Bundle &b, const std::string &path, const std::vector<Tensor> &args,
                  const std::vector<Tensor> &results,
                  const std::map<std::string, std::string> &metadata, std::string &error);

} // namespace dmrt

#endif // DMRT_LAYERDATA_H
