//===- BundleExecutor.cpp - Run every step of a bundle in order -----------===//
#include "runtime/BundleExecutor.h"

#include "runtime/format/KernelAbi.h"

#include <algorithm>
#include <fstream>
#include <iterator>

namespace dmrt {
namespace {

bool cudaOk(cudaError_t e, const std::string &what, std::string &error) {
  if (e == cudaSuccess)
    return true;
  error = what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return false;
}

std::string kernelName(const BundleKernel &k) {
  return "kernel " + std::to_string(k.id) + " (" + k.name + ")";
}
std::string contractionName(const BundleContraction &c) {
  return "contraction " + std::to_string(c.id) + " (" + c.equation + ")";
}

} // namespace

BundleExecutor::~BundleExecutor() {
  gemms_.clear();
  for (auto &kv : kernels_)
    if (kv.second.workspace)
      cudaFree(kv.second.workspace);
  for (CUmodule m : modules_)
    driver_.unloadModule(m);
  for (auto &kv : base_)
    cudaFree(kv.second);
  if (gemmWorkspace_)
    cudaFree(gemmWorkspace_);
  if (lt_)
    cublasLtDestroy(lt_);
  if (stream_)
    cudaStreamDestroy(stream_);
}

void *BundleExecutor::ptr(int64_t id) const {
  int64_t offset = 0;
  int64_t base = b_->baseOf(id, offset);
  return static_cast<char *>(base_.at(base)) +
         offset * static_cast<int64_t>(dtypeSize(b_->tensor(id)->dtype));
}

bool BundleExecutor::open(const Bundle &b, int ordinal, const GemmPlans &plans,
                          std::string &error) {
  b_ = &b;
  if (!driver_.open(ordinal, error))
    return false;
  if (!cudaOk(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
              "cudaStreamCreateWithFlags", error))
    return false;
  if (cublasStatus_t s = cublasLtCreate(&lt_); s != CUBLAS_STATUS_SUCCESS) {
    error = std::string("cublasLtCreate failed: ") + cublasStatusName(s);
    return false;
  }
  if (!cudaOk(cudaMalloc(&gemmWorkspace_, GemmRunner::kWorkspaceBytes),
              "cudaMalloc (cuBLASLt workspace)", error))
    return false;
  for (const BundleTensor &t : b.tensors) {
    if (t.isAlias)
      continue;
    void *p = nullptr;
    size_t bytes = static_cast<size_t>(std::max<int64_t>(t.bytes, 1));
    if (!cudaOk(cudaMalloc(&p, bytes),
                "cudaMalloc of tensor " + std::to_string(t.id) + " (" + t.name + ", " +
                    std::to_string(bytes) + " bytes)",
                error))
      return false;
    base_[t.id] = p;
  }
  for (const BundleKernel &k : b.kernels)
    if (!loadKernel(k, error))
      return false;
  for (const BundleContraction &c : b.contractions)
    if (!prepareContraction(c, plans, error))
      return false;
  return cudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (open)", error);
}

bool BundleExecutor::loadKernel(const BundleKernel &k, std::string &error) {
  std::string path = b_->path(k.cubin);
  std::ifstream is(path, std::ios::binary);
  if (!is) {
    error = kernelName(k) + ": " + path + ": cannot open";
    return false;
  }
  std::vector<char> image((std::istreambuf_iterator<char>(is)),
                          std::istreambuf_iterator<char>());
  CUmodule mod = nullptr;
  if (!driver_.loadModule(image, path, mod, error))
    return false;
  modules_.push_back(mod);
  LoadedKernel lk;
  if (!driver_.getFunction(mod, k.entry, lk.fn, error)) {
    error = kernelName(k) + ": " + path + ": " + error;
    return false;
  }
  if (k.sharedBytes > 48 * 1024 &&
      !driver_.setMaxDynamicShared(lk.fn, static_cast<int>(k.sharedBytes), error))
    return false;
  if (k.workspaceBytes > 0) {
    // Zeroed once; each launch leaves it ready for the next.
    size_t bytes = static_cast<size_t>(k.workspaceBytes);
    if (!cudaOk(cudaMalloc(&lk.workspace, bytes), kernelName(k) + ": workspace", error) ||
        !cudaOk(cudaMemsetAsync(lk.workspace, 0, bytes, stream_),
                kernelName(k) + ": workspace", error))
      return false;
  }
  kernels_[k.id] = lk;
  return true;
}

bool BundleExecutor::addGemm(const BundleContraction &c, const GemmCall &call,
                             std::string &error) {
  const GemmDescriptor &g = call.gemm;
  Gemm gemm;
  gemm.first = g.swapOperands ? c.b : c.a;
  gemm.second = g.swapOperands ? c.a : c.b;
  gemm.firstOffset = g.swapOperands ? call.bOffset : call.aOffset;
  gemm.secondOffset = g.swapOperands ? call.aOffset : call.bOffset;
  gemm.dOffset = call.dOffset;
  DType biasType = c.bias >= 0 ? b_->tensor(c.bias)->dtype : DType::F32;
  gemm.runner = std::make_unique<GemmRunner>();
  if (!gemm.runner->init(lt_, g, b_->tensor(gemm.first)->dtype,
                         b_->tensor(gemm.second)->dtype, b_->tensor(c.d)->dtype, biasType,
                         gemmWorkspace_, error)) {
    error = contractionName(c) + ": " + error;
    return false;
  }
  if (gemm.runner->usesAux()) {
    error = contractionName(c) + ": epilogues with an aux buffer are not run by the "
                                 "executor yet";
    return false;
  }
  std::vector<cublasLtMatmulHeuristicResult_t> algos;
  if (!gemm.runner->algorithms(1, algos, error)) {
    error = contractionName(c) + ": " + error;
    return false;
  }
  gemms_[c.id].push_back(std::move(gemm));
  return true;
}

bool BundleExecutor::prepareContraction(const BundleContraction &c, const GemmPlans &plans,
                                        std::string &error) {
  if (c.mappable)
    return addGemm(c, GemmCall{c.gemm}, error);
  auto plan = plans.find(c.id);
  if (plan == plans.end()) {
    error = contractionName(c) + " has no cuBLASLt form (" + c.unmappable +
            ") and no plan was given";
    return false;
  }
  for (const GemmCall &call : plan->second)
    if (!addGemm(c, call, error))
      return false;
  return true;
}

bool BundleExecutor::fillAll(uint8_t byte, std::string &error) {
  for (auto &kv : base_)
    if (!cudaOk(cudaMemsetAsync(kv.second, byte,
                                static_cast<size_t>(b_->tensor(kv.first)->bytes), stream_),
                "cudaMemsetAsync of tensor " + b_->tensor(kv.first)->name, error))
      return false;
  return cudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (fill)", error);
}

bool BundleExecutor::upload(int64_t id, const std::vector<uint8_t> &bytes,
                            std::string &error) {
  const BundleTensor *t = b_->tensor(id);
  if (static_cast<int64_t>(bytes.size()) != t->bytes) {
    error = "upload of tensor " + t->name + ": " + std::to_string(bytes.size()) +
            " bytes given, it has " + std::to_string(t->bytes);
    return false;
  }
  // On the executor's stream (non-blocking: cudaMemcpy would not order it).
  return cudaOk(cudaMemcpyAsync(ptr(id), bytes.data(), bytes.size(),
                                cudaMemcpyHostToDevice, stream_),
                "cudaMemcpyAsync to tensor " + t->name, error) &&
         cudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (upload)", error);
}

bool BundleExecutor::download(int64_t id, std::vector<uint8_t> &bytes, std::string &error) {
  const BundleTensor *t = b_->tensor(id);
  bytes.resize(static_cast<size_t>(t->bytes));
  return cudaOk(cudaMemcpyAsync(bytes.data(), ptr(id), bytes.size(),
                                cudaMemcpyDeviceToHost, stream_),
                "cudaMemcpyAsync from tensor " + t->name, error) &&
         cudaOk(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (download)", error);
}

bool BundleExecutor::launchKernel(const BundleKernel &k, uint64_t seed, std::string &error) {
  const LoadedKernel &lk = kernels_.at(k.id);
  auto order = kernelParameters(k.inputs.size(), k.outputs.size(), k.workspaceBytes > 0);
  std::vector<void *> values;
  values.reserve(order.size()); // params point into it: no reallocation
  unsigned long long s = seed;
  std::vector<void *> params;
  for (KernelParam p : order) {
    switch (p.kind) {
    case KernelParamKind::Input: values.push_back(ptr(k.inputs[p.index])); break;
    case KernelParamKind::Output: values.push_back(ptr(k.outputs[p.index])); break;
    case KernelParamKind::Workspace: values.push_back(lk.workspace); break;
    case KernelParamKind::Seed: params.push_back(&s); continue;
    }
    params.push_back(&values.back());
  }
  unsigned grid[3], block[3];
  for (int d = 0; d < 3; ++d) {
    grid[d] = static_cast<unsigned>(k.grid[d]);
    block[d] = static_cast<unsigned>(k.block[d]);
  }
  // cuLaunchKernel copies the parameters before returning.
  if (!driver_.launch(lk.fn, grid, block, static_cast<unsigned>(k.sharedBytes),
                      reinterpret_cast<CUstream>(stream_), params.data(), error)) {
    error = kernelName(k) + ": " + error;
    return false;
  }
  return true;
}

bool BundleExecutor::runContraction(const BundleContraction &c, std::string &error) {
  const void *bias = c.bias >= 0 ? ptr(c.bias) : nullptr;
  for (const Gemm &g : gemms_.at(c.id)) {
    auto at = [&](int64_t id, int64_t offset) {
      return static_cast<char *>(ptr(id)) +
             offset * static_cast<int64_t>(dtypeSize(b_->tensor(id)->dtype));
    };
    if (!g.runner->run(at(g.first, g.firstOffset), at(g.second, g.secondOffset),
                       at(c.d, g.dOffset),
                       bias, stream_, nullptr, error)) {
      error = contractionName(c) + ": " + error;
      return false;
    }
  }
  return true;
}

bool BundleExecutor::run(uint64_t seed, std::string &error) {
  for (const BundleStep &s : b_->steps) {
    bool ok = s.kind == BundleStep::Kernel
                  ? launchKernel(*b_->kernel(s.id), seed, error)
                  : runContraction(*b_->contraction(s.id), error);
    if (!ok)
      return false;
  }
  return cudaOk(cudaStreamSynchronize(stream_), "the step (cudaStreamSynchronize)", error) &&
         cudaOk(cudaGetLastError(), "the step", error);
}

} // namespace dmrt
