//===- KernelAbi.h - The parameter order of a bundle kernel --------*- C++ -*-===//
//
// What the code generator declares and the runtime passes, in this order
// (docs/bundle-format.md):
//
//   inputs..., outputs...,         device pointers, in the manifest's order
//   [void *workspace,]             only when workspace_bytes > 0
//   unsigned long long seed        the dropout seed
//
// Both sides walk kernelParameters() instead of restating the order.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_FORMAT_KERNELABI_H
#define DMRT_FORMAT_KERNELABI_H

#include <cstddef>
#include <vector>

namespace dmrt {

enum class KernelParamKind { Input, Output, Workspace, Seed };

struct KernelParam {
  KernelParamKind kind;
  size_t index; ///< position among the parameters of its kind
};

/// The parameters of a kernel with `inputs` inputs and `outputs` outputs.
inline std::vector<KernelParam> kernelParameters(size_t inputs, size_t outputs,
                                                 bool workspace) {
  std::vector<KernelParam> params;
  for (size_t i = 0; i < inputs; ++i)
    params.push_back({KernelParamKind::Input, i});
  for (size_t i = 0; i < outputs; ++i)
    params.push_back({KernelParamKind::Output, i});
  if (workspace)
    params.push_back({KernelParamKind::Workspace, 0});
  params.push_back({KernelParamKind::Seed, 0});
  return params;
}

} // namespace dmrt

#endif // DMRT_FORMAT_KERNELABI_H
