//===- BundleKernels.cpp - A bundle's steps made ready on one device ------===//
#include "runtime/BundleKernels.h"

#include "runtime/LayerPlan.h"

#include <cstdio>

namespace dmrt {
namespace {

std::string kernelName(const Bundle &b, size_t i) {
  return stepName(b, {BundleStep::Kernel, b.kernels[i].id});
}
std::string contractionName(const Bundle &b, size_t i) {
  return stepName(b, {BundleStep::Contraction, b.contractions[i].id});
}

} // namespace

BundleKernels::BundleKernels(const Bundle &b, CudaDriver &driver)
    : b_(b), driver_(driver), modules_(std::make_unique<ModuleCache>(driver)),
      functions_(b.kernels.size(), nullptr), shapes_(b.kernels.size()),
      finishFunctions_(b.kernels.size(), nullptr), finishShapes_(b.kernels.size()),
      gemms_(b.contractions.size()) {
  for (size_t i = 0; i < b.kernels.size(); ++i) {
    const BundleKernel &k = b.kernels[i];
    for (int d = 0; d < 3; ++d) {
      shapes_[i].grid[d] = static_cast<unsigned>(k.grid[d]);
      shapes_[i].block[d] = static_cast<unsigned>(k.block[d]);
      finishShapes_[i].grid[d] = static_cast<unsigned>(k.finishGrid[d]);
      finishShapes_[i].block[d] = static_cast<unsigned>(k.finishBlock[d]);
    }
    shapes_[i].sharedBytes = static_cast<unsigned>(k.sharedBytes);
  }
}

void BundleKernels::close() {
  gemms_.clear();
  modules_.reset();
  functions_.assign(functions_.size(), nullptr);
  finishFunctions_.assign(finishFunctions_.size(), nullptr);
  if (workspace_)
    cudaFree(workspace_);
  workspace_ = nullptr;
  if (lt_)
    cublasLtDestroy(lt_);
  lt_ = nullptr;
}

CUresult BundleKernels::prepareKernel(size_t i, const CubinImages &images, std::string &error) {
  if (functions_[i])
    return CUDA_SUCCESS;
  const BundleKernel &k = b_.kernels[i];
  auto image = images.find(k.cubin);
  if (image == images.end()) {
    error = kernelName(b_, i) + ": cubin " + b_.path(k.cubin) +
            " was not read (loadBundle without images)";
    return CUDA_ERROR_FILE_NOT_FOUND;
  }
  CUresult r = modules_->function(b_.path(k.cubin), image->second, k.entry, k.sharedBytes,
                                  functions_[i], error);
  if (r == CUDA_SUCCESS && !k.finishEntry.empty())
    r = modules_->function(b_.path(k.cubin), image->second, k.finishEntry, 0,
                           finishFunctions_[i], error);
  if (r != CUDA_SUCCESS) {
    functions_[i] = finishFunctions_[i] = nullptr;
    error = kernelName(b_, i) + ": " + error;
  }
  return r;
}

bool BundleKernels::prepareGemmContext(std::string &error) {
  if (!lt_) {
    if (cublasStatus_t s = cublasLtCreate(&lt_); s != CUBLAS_STATUS_SUCCESS) {
      lt_ = nullptr;
      error = std::string("cublasLtCreate failed: ") + cublasStatusName(s);
      return false;
    }
  }
  if (!workspace_) {
    // Zeroed once, so that no tool sees cuBLASLt read bytes nobody wrote.
    cudaError_t e = cudaMalloc(&workspace_, GemmRunner::kWorkspaceBytes);
    if (e == cudaSuccess)
      e = cudaMemset(workspace_, 0, GemmRunner::kWorkspaceBytes);
    if (e != cudaSuccess) {
      if (workspace_)
        cudaFree(workspace_);
      workspace_ = nullptr;
      error = std::string("the cuBLASLt workspace (cudaMalloc/cudaMemset): ") +
              cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
      return false;
    }
  }
  return true;
}

bool BundleKernels::prepareContraction(size_t i, std::string &error) {
  if (gemms_[i])
    return true;
  const BundleContraction &c = b_.contractions[i];
  if (!c.mappable) {
    error = contractionName(b_, i) + " has no cuBLASLt form: " + c.unmappable;
    return false;
  }
  if (!lt_ || !workspace_) {
    error = contractionName(b_, i) + ": no cuBLASLt context (prepareGemmContext first)";
    return false;
  }
  const GemmDescriptor &g = c.gemm;
  auto runner = std::make_unique<GemmRunner>();
  DType biasType = c.bias >= 0 ? b_.tensor(c.bias)->dtype : DType::F32;
  if (!runner->init(lt_, g, b_.tensor(g.swapOperands ? c.b : c.a)->dtype,
                    b_.tensor(g.swapOperands ? c.a : c.b)->dtype, b_.tensor(c.d)->dtype,
                    biasType, workspace_, error)) {
    error = contractionName(b_, i) + ": " + error;
    return false;
  }
  if (c.algorithm != kHeuristicAlgorithm) {
    GemmAlgoConfig algo;
    std::string why;
    if (!parseAlgorithm(c.algorithm, algo, why) || !runner->useAlgorithm(algo, why)) {
      std::fprintf(stderr, "dmrt: warning: %s: %s; running the heuristic's algorithm instead\n",
                   contractionName(b_, i).c_str(), why.c_str());
    }
  }
  gemms_[i] = std::move(runner);
  return true;
}

bool BundleKernels::prepareAll(const CubinImages &images, std::string &error) {
  for (size_t i = 0; i < b_.kernels.size(); ++i)
    if (prepareKernel(i, images, error) != CUDA_SUCCESS)
      return false;
  if (!b_.contractions.empty() && !prepareGemmContext(error))
    return false;
  std::vector<cublasLtMatmulHeuristicResult_t> best;
  for (size_t i = 0; i < b_.contractions.size(); ++i) {
    if (!prepareContraction(i, error))
      return false;
    if (!gemms_[i]->chosenAlgorithm() && !gemms_[i]->algorithms(1, best, error)) {
      error = contractionName(b_, i) + ": " + error;
      return false;
    }
  }
  return true;
}

bool BundleKernels::launch(size_t i, void **params, cudaStream_t stream, std::string &error) {
  for (int part = 0; part < parts(i); ++part)
    if (!launchPart(i, part, params, stream, error))
      return false;
  return true;
}

bool BundleKernels::launchPart(size_t i, int part, void **params, cudaStream_t stream,
                               std::string &error) {
  const LaunchShape &s = shape(i, part);
  if (!driver_.launch(function(i, part), s.grid, s.block, s.sharedBytes,
                      reinterpret_cast<CUstream>(stream), params, error)) {
    error = kernelName(b_, i) + (part ? " (finishing launch)" : "") + ": " + error;
    return false;
  }
  return true;
}

} // namespace dmrt
