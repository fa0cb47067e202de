//===- GpuClocks.h - The GPU's clock and power while a benchmark runs -----===//
//
// A step measured back to back for seconds can run slower than the sum of
// its steps measured alone in short bursts for a reason outside the code:
// the GPU reaching its power limit lowers its SM clock (an H200 running
// gpt2-medium's steps: 1710-1845 MHz at 690 W of 700 W, against 1980 MHz
// idle). GpuClockSampler samples the SM clock, the power draw and the
// reasons the driver gives for a lowered clock through NVML, from a thread,
// while dmc-run times the steps; summarizeClocks and describeClocks say what
// it saw. NVML is loaded when sampling starts (libnvidia-ml.so.1, part of
// the driver): no build dependency, and without it the summary says why.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_TOOLS_GPUCLOCKS_H
#define DMRT_TOOLS_GPUCLOCKS_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dmrt {

/// Clock-lowering reasons NVML reports (nvmlClocksEventReason*, stable bits).
enum ClockReason : uint64_t {
  kClockSwPowerCap = 0x4,
  kClockHwSlowdown = 0x8,
  kClockSwThermal = 0x20,
  kClockHwThermal = 0x40,
  kClockHwPowerBrake = 0x80,
};

struct ClockSample {
  unsigned smMhz = 0;
  unsigned powerMw = 0;
  uint64_t reasons = 0;
};

struct ClockSummary {
  int samples = 0;
  unsigned medianMhz = 0, minMhz = 0, highestMhz = 0; ///< of the samples
  unsigned maxMhz = 0;      ///< the GPU's maximum SM clock (0: unknown)
  double powerW = 0;        ///< median power draw (NVML averages it over 1 s)
  double limitW = 0;        ///< the enforced power limit (0: unknown)
  double powerCapped = 0;   ///< share of samples with kClockSwPowerCap
  double thermal = 0;       ///< share with a thermal or hardware slowdown
};

/// The summary of `samples` (empty: samples = 0).
ClockSummary summarizeClocks(const std::vector<ClockSample> &samples, unsigned maxMhz,
                             unsigned limitMw);

/// "SM clock median 1755 MHz (1710-1845; maximum 1980), power 689 W of 700 W
/// (the driver's 1 s average), power-capped in 87% of 250 samples", or "no
/// samples" when there are none.
std::string describeClocks(const ClockSummary &s);

/// Whether the clocks of `s` fell enough below the maximum to explain a step
/// slower than measured alone: some samples power-capped or thermally slowed
/// with the median clock at least 3% under the maximum.
bool clocksLowered(const ClockSummary &s);

/// Samples NVML every `periodMs` from start() to stop() on one thread.
class GpuClockSampler {
public:
  GpuClockSampler();
  ~GpuClockSampler();
  GpuClockSampler(const GpuClockSampler &) = delete;
  GpuClockSampler &operator=(const GpuClockSampler &) = delete;

  /// Starts sampling the GPU of PCI bus id `pciBusId` (cudaDeviceGetPCIBusId);
  /// false, with why(), when NVML cannot be loaded or the device not found.
  bool start(const std::string &pciBusId, int periodMs = 20);
  /// Stops and summarizes the samples since start().
  ClockSummary stop();
  const std::string &why() const { return why_; }

  struct Nvml; ///< the NVML entry points (GpuClocks.cpp)

private:
  std::unique_ptr<Nvml> nvml_;
  std::string why_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  std::mutex mutex_;
  std::vector<ClockSample> samples_;
  unsigned maxMhz_ = 0, limitMw_ = 0;
};

} // namespace dmrt

#endif // DMRT_TOOLS_GPUCLOCKS_H
