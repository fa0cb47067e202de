//===- CudaDriver.h - The CUDA driver API, loaded at run time -----*- C++ -*-===//
//
// libcuda is never linked: `CudaDriver::open` dlopens libcuda.so.1 and resolves
// the few entry points the runtime needs. Memory, streams, events and device
// properties go through the CUDA runtime (cudart); `open` first makes cudart
// create the device's primary context (cudaFree(0)) and then makes the same
// context current for the driver, so both APIs share it.
//
// Without a driver or a device `open` fails with `noDevice() == true` and a
// message; tools then exit with kExitNoDevice (77, "skipped"). Any other
// failure (a driver older than the runtime, a device the driver does not
// support, ...) is an error on a machine with a GPU: tools exit non-zero,
// never 77, so ctest reports it as a failure, not a skip.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_CUDADRIVER_H
#define DMRT_CUDADRIVER_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace dmrt {

constexpr int kExitNoDevice = 77;

/// Whether a failed cuInit means "no GPU here": no device, or no real driver
/// (the toolkit's stub libcuda). Everything else is a real error.
bool cuInitMeansNoDevice(CUresult r);
/// The same for the runtime (cudaGetDeviceCount): cudaErrorNoDevice and
/// cudaErrorStubLibrary mean no GPU. cudart also says
/// cudaErrorInsufficientDriver when it finds no driver at all, so that one
/// means "no GPU" only when libcuda.so.1 cannot be loaded
/// (`driverLibraryLoads`); with a driver present it is a driver older than
/// the runtime: an error. Everything else is an error.
bool cudaErrorMeansNoDevice(cudaError_t e, bool driverLibraryLoads);
/// Whether the driver library libcuda.so.1 can be loaded (dlopen).
bool cudaDriverLibraryLoads();
/// "what: cudaErrorX (description)" into `error` unless e == cudaSuccess
/// (the const char * form builds no string on success).
bool cudaCheck(cudaError_t e, const char *what, std::string &error);
bool cudaCheck(cudaError_t e, const std::string &what, std::string &error);

/// The exit status of a GPU test or tool whose device check failed:
/// kExitNoDevice (skip) when `noDevice`, else 1 (fail).
inline int deviceFailureExitCode(bool noDevice) { return noDevice ? kExitNoDevice : 1; }

/// Whether a failed module load or function lookup is the bundle's fault (a
/// cubin the driver rejects: not an image, built for another arch, a PTX it
/// cannot compile, a missing entry) rather than the device's (out of memory,
/// a broken context, ...). The benchmark harness exits 2 for the first, 1
/// for the second.
bool moduleErrorIsBundleFault(CUresult r);

/// What ModuleCache needs of the driver: loading, looking up and unloading
/// modules on one device. An interface so that unit tests load fakes. Each
/// call returns the driver's status (CUDA_SUCCESS or the failed call's) and
/// on failure `error`: "cuCall failed: CUDA_ERROR_X (description)".
class ModuleLoader {
public:
  virtual ~ModuleLoader() = default;
  /// The device (ordinal) whose context modules are loaded into.
  virtual int device() const = 0;
  virtual CUresult loadModule(const std::vector<char> &image, CUmodule &out,
                              std::string &error) = 0;
  virtual CUresult getFunction(CUmodule m, const std::string &name, CUfunction &out,
                               std::string &error) = 0;
  virtual CUresult setMaxDynamicShared(CUfunction f, int bytes, std::string &error) = 0;
  virtual void unloadModule(CUmodule m) = 0;
};

class CudaDriver : public ModuleLoader {
public:
  CudaDriver() = default;
  ~CudaDriver() override;
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  /// Loads the driver, initialises device `ordinal` and its primary context.
  bool open(int ordinal, std::string &error);
  /// After a failed open: true when the cause is a missing driver or device
  /// (as opposed to a real error on a machine with a GPU).
  bool noDevice() const { return noDevice_; }
  bool isOpen() const { return ctx_ != nullptr; }
  int device() const override { return ordinal_; }

  /// Loads a cubin image (the file's bytes).
  CUresult loadModule(const std::vector<char> &image, CUmodule &out,
                      std::string &error) override;
  CUresult getFunction(CUmodule m, const std::string &name, CUfunction &out,
                       std::string &error) override;
  bool launch(CUfunction f, const unsigned grid[3], const unsigned block[3],
              unsigned sharedBytes, CUstream stream, void **params,
              std::string &error);
  /// Sets CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (needed above 48 KiB).
  CUresult setMaxDynamicShared(CUfunction f, int bytes, std::string &error) override;
  void unloadModule(CUmodule m) override;
  /// Sets the parameters of kernel node `node` (captured from a launch of
  /// `f`) in the instantiated graph `exec` (cuGraphExecKernelNodeSetParams):
  /// the same launch with new parameter values.
  bool setGraphKernelParams(CUgraphExec exec, CUgraphNode node, CUfunction f,
                            const unsigned grid[3], const unsigned block[3],
                            unsigned sharedBytes, void **params, std::string &error);
  /// Adds a kernel node launching `f` to `graph` after `deps`
  /// (cuGraphAddKernelNode; the parameter values are copied).
  bool addGraphKernelNode(CUgraph graph, const CUgraphNode *deps, size_t depCount,
                          CUfunction f, const unsigned grid[3], const unsigned block[3],
                          void **params, CUgraphNode &out, std::string &error);

  /// "CUDA_ERROR_X (description)" for a driver status.
  std::string errorString(CUresult r) const;

private:
  bool check(CUresult r, const char *call, std::string &error) const;
  /// `r`, with "call failed: ..." in `error` unless it is CUDA_SUCCESS.
  CUresult status(CUresult r, const char *call, std::string &error) const;

  void *lib_ = nullptr;
  bool noDevice_ = false;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  int ordinal_ = 0;

  CUresult (*cuInit_)(unsigned) = nullptr;
  CUresult (*cuDeviceGet_)(CUdevice *, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain_)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease_)(CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent_)(CUcontext) = nullptr;
  CUresult (*cuModuleLoadData_)(CUmodule *, const void *) = nullptr;
  CUresult (*cuModuleGetFunction_)(CUfunction *, CUmodule, const char *) = nullptr;
  CUresult (*cuModuleUnload_)(CUmodule) = nullptr;
  CUresult (*cuFuncSetAttribute_)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*cuLaunchKernel_)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, unsigned, CUstream, void **,
                              void **) = nullptr;
  CUresult (*cuGetErrorString_)(CUresult, const char **) = nullptr;
  /// cuGraphExecKernelNodeSetParams_v2 (or the original, which reads the
  /// v1 prefix of the same struct); null when the driver has neither.
  CUresult (*cuGraphExecKernelNodeSetParams_)(CUgraphExec, CUgraphNode,
                                              const CUDA_KERNEL_NODE_PARAMS_v2 *) = nullptr;
  CUresult (*cuGetErrorName_)(CUresult, const char **) = nullptr;
  /// cuGraphAddKernelNode_v2 (or the original); null when the driver has neither.
  CUresult (*cuGraphAddKernelNode_)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
                                    const CUDA_KERNEL_NODE_PARAMS_v2 *) = nullptr;
};

} // namespace dmrt

#endif // DMRT_CUDADRIVER_H
