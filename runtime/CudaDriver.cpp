//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
#include "runtime/CudaDriver.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace dmrt {

bool cuInitMeansNoDevice(CUresult r) {
  return r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY;
}

bool moduleErrorIsBundleFault(CUresult r) {
  switch (r) {
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_INVALID_SOURCE:
  case CUDA_ERROR_NOT_FOUND: // cuModuleGetFunction: no such entry
    return true;
  default:
    return false;
  }
}

bool cudaErrorMeansNoDevice(cudaError_t e, bool driverLibraryLoads) {
  return e == cudaErrorNoDevice || e == cudaErrorStubLibrary ||
         (e == cudaErrorInsufficientDriver && !driverLibraryLoads);
}

bool cudaDriverLibraryLoads() {
  // Loaded once and kept: cudart uses the same library.
  static const bool loads = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) != nullptr;
  return loads;
}

CudaDriver::~CudaDriver() {
  if (ctx_ && cuDevicePrimaryCtxRelease_)
    cuDevicePrimaryCtxRelease_(dev_);
  // The library stays loaded: cudart keeps using the driver until exit.
}

std::string CudaDriver::errorString(CUresult r) const {
  const char *name = nullptr, *desc = nullptr;
  if (cuGetErrorName_)
    cuGetErrorName_(r, &name);
  if (cuGetErrorString_)
    cuGetErrorString_(r, &desc);
  std::string s = name ? name : "CUresult " + std::to_string(static_cast<int>(r));
  if (desc)
    s += std::string(" (") + desc + ")";
  return s;
}

bool CudaDriver::check(CUresult r, const char *call, std::string &error) const {
  if (r == CUDA_SUCCESS)
    return true;
  error = std::string(call) + " failed: " + errorString(r);
  return false;
}

bool cudaCheck(cudaError_t e, const char *what, std::string &error) {
  if (e == cudaSuccess)
    return true;
  error = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  return false;
}

bool cudaCheck(cudaError_t e, const std::string &what, std::string &error) {
  return cudaCheck(e, what.c_str(), error);
}

CUresult CudaDriver::status(CUresult r, const char *call, std::string &error) const {
  check(r, call, error);
  return r;
}

bool CudaDriver::open(int ordinal, std::string &error) {
  noDevice_ = false;
  ordinal_ = ordinal;
  lib_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!lib_) {
    const char *e = dlerror();
    noDevice_ = true;
    error = std::string("cannot load the NVIDIA driver library libcuda.so.1 (") +
            (e ? e : "unknown dlopen error") + ")";
    return false;
  }
  struct Sym {
    const char *name;
    void **slot;
  } syms[] = {
      {"cuInit", reinterpret_cast<void **>(&cuInit_)},
      {"cuDeviceGet", reinterpret_cast<void **>(&cuDeviceGet_)},
      {"cuDevicePrimaryCtxRetain", reinterpret_cast<void **>(&cuDevicePrimaryCtxRetain_)},
      {"cuDevicePrimaryCtxRelease", reinterpret_cast<void **>(&cuDevicePrimaryCtxRelease_)},
      {"cuCtxSetCurrent", reinterpret_cast<void **>(&cuCtxSetCurrent_)},
      {"cuModuleLoadData", reinterpret_cast<void **>(&cuModuleLoadData_)},
      {"cuModuleGetFunction", reinterpret_cast<void **>(&cuModuleGetFunction_)},
      {"cuModuleUnload", reinterpret_cast<void **>(&cuModuleUnload_)},
      {"cuFuncSetAttribute", reinterpret_cast<void **>(&cuFuncSetAttribute_)},
      {"cuLaunchKernel", reinterpret_cast<void **>(&cuLaunchKernel_)},
      {"cuGetErrorString", reinterpret_cast<void **>(&cuGetErrorString_)},
      {"cuGetErrorName", reinterpret_cast<void **>(&cuGetErrorName_)},
  };
  for (Sym &s : syms) {
    *s.slot = dlsym(lib_, s.name);
    if (!*s.slot) {
      error = std::string("libcuda.so.1 has no symbol ") + s.name +
              " (driver too old?)";
      return false;
    }
  }
  // Optional (graph replays capture again without it): the _v2 entry point
  // of CUDA 12+, else the original one; both read the v2 struct's prefix.
  *reinterpret_cast<void **>(&cuGraphExecKernelNodeSetParams_) =
      dlsym(lib_, "cuGraphExecKernelNodeSetParams_v2");
  if (!cuGraphExecKernelNodeSetParams_)
    *reinterpret_cast<void **>(&cuGraphExecKernelNodeSetParams_) =
        dlsym(lib_, "cuGraphExecKernelNodeSetParams");
  *reinterpret_cast<void **>(&cuGraphAddKernelNode_) = dlsym(lib_, "cuGraphAddKernelNode_v2");
  if (!cuGraphAddKernelNode_)
    *reinterpret_cast<void **>(&cuGraphAddKernelNode_) = dlsym(lib_, "cuGraphAddKernelNode");
  CUresult r = cuInit_(0);
  if (r != CUDA_SUCCESS) {
    noDevice_ = cuInitMeansNoDevice(r);
    return check(r, "cuInit", error);
  }
  int count = 0;
  cudaError_t ce = cudaGetDeviceCount(&count);
  if (ce != cudaSuccess || count == 0) {
    // libcuda.so.1 is loaded here: an insufficient driver is a real error.
    noDevice_ = ce == cudaSuccess || cudaErrorMeansNoDevice(ce, true);
    error = ce != cudaSuccess
                ? std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(ce) +
                      " (" + cudaGetErrorString(ce) + ")"
                : std::string("no CUDA device");
    return false;
  }
  if (ordinal < 0 || ordinal >= count) {
    error = "device " + std::to_string(ordinal) + " does not exist (" +
            std::to_string(count) + " device(s))";
    return false;
  }
  if ((ce = cudaSetDevice(ordinal)) != cudaSuccess ||
      (ce = cudaFree(nullptr)) != cudaSuccess) {
    error = std::string("creating the primary context failed: ") +
            cudaGetErrorName(ce) + " (" + cudaGetErrorString(ce) + ")";
    return false;
  }
  if (!check(cuDeviceGet_(&dev_, ordinal), "cuDeviceGet", error))
    return false;
  CUcontext ctx = nullptr;
  if (!check(cuDevicePrimaryCtxRetain_(&ctx, dev_), "cuDevicePrimaryCtxRetain",
             error))
    return false;
  ctx_ = ctx;
  return check(cuCtxSetCurrent_(ctx_), "cuCtxSetCurrent", error);
}

CUresult CudaDriver::loadModule(const std::vector<char> &image, CUmodule &out,
                              std::string &error) {
  return status(cuModuleLoadData_(&out, image.data()), "cuModuleLoadData", error);
}

CUresult CudaDriver::getFunction(CUmodule m, const std::string &name, CUfunction &out,
                               std::string &error) {
  return status(cuModuleGetFunction_(&out, m, name.c_str()), "cuModuleGetFunction", error);
}

CUresult CudaDriver::setMaxDynamicShared(CUfunction f, int bytes, std::string &error) {
  return status(cuFuncSetAttribute_(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes),
                "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", error);
}

bool CudaDriver::launch(CUfunction f, const unsigned grid[3],
                        const unsigned block[3], unsigned sharedBytes,
                        CUstream stream, void **params, std::string &error) {
  return check(cuLaunchKernel_(f, grid[0], grid[1], grid[2], block[0], block[1],
                               block[2], sharedBytes, stream, params, nullptr),
               "cuLaunchKernel", error);
}

namespace {
/// A kernel node's parameters (kern, ctx null: func is set).
CUDA_KERNEL_NODE_PARAMS_v2 kernelNodeParams(CUfunction f, const unsigned grid[3],
                                            const unsigned block[3], unsigned sharedBytes,
                                            void **params) {
  CUDA_KERNEL_NODE_PARAMS_v2 p = {};
  p.func = f;
  p.gridDimX = grid[0];
  p.gridDimY = grid[1];
  p.gridDimZ = grid[2];
  p.blockDimX = block[0];
  p.blockDimY = block[1];
  p.blockDimZ = block[2];
  p.sharedMemBytes = sharedBytes;
  p.kernelParams = params;
  return p;
}
} // namespace

bool CudaDriver::setGraphKernelParams(CUgraphExec exec, CUgraphNode node, CUfunction f,
                                      const unsigned grid[3], const unsigned block[3],
                                      unsigned sharedBytes, void **params,
                                      std::string &error) {
  if (!cuGraphExecKernelNodeSetParams_) {
    error = "libcuda.so.1 has no cuGraphExecKernelNodeSetParams";
    return false;
  }
  CUDA_KERNEL_NODE_PARAMS_v2 p = kernelNodeParams(f, grid, block, sharedBytes, params);
  return check(cuGraphExecKernelNodeSetParams_(exec, node, &p),
               "cuGraphExecKernelNodeSetParams", error);
}

bool CudaDriver::addGraphKernelNode(CUgraph graph, const CUgraphNode *deps, size_t depCount,
                                    CUfunction f, const unsigned grid[3],
                                    const unsigned block[3], void **params, CUgraphNode &out,
                                    std::string &error) {
  if (!cuGraphAddKernelNode_) {
    error = "libcuda.so.1 has no cuGraphAddKernelNode";
    return false;
  }
  CUDA_KERNEL_NODE_PARAMS_v2 p = kernelNodeParams(f, grid, block, 0, params);
  return check(cuGraphAddKernelNode_(&out, graph, deps, depCount, &p), "cuGraphAddKernelNode",
               error);
}

void CudaDriver::unloadModule(CUmodule m) {
  if (m && cuModuleUnload_)
    cuModuleUnload_(m);
}

} // namespace dmrt
