//===- GpuClocks.cpp - The GPU's clock and power while a benchmark runs ---===//
#include "runtime/tools/GpuClocks.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace dmrt {

/// The NVML entry points used, declared by their stable C ABI (nvml.h is not
/// part of the CUDA toolkit packages dmc builds with): nvmlReturn_t is an int
/// (0: success), a device handle an opaque pointer, NVML_CLOCK_SM is 1.
struct GpuClockSampler::Nvml {
  void *lib = nullptr;
  void *device = nullptr;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*byPciBusId)(const char *, void **) = nullptr;
  int (*clock)(void *, int, unsigned *) = nullptr;
  int (*maxClock)(void *, int, unsigned *) = nullptr;
  int (*reasons)(void *, unsigned long long *) = nullptr;
  int (*power)(void *, unsigned *) = nullptr;
  int (*powerLimit)(void *, unsigned *) = nullptr;
  static constexpr int kClockSm = 1;

  ~Nvml() {
    if (init && shutdown)
      shutdown();
    if (lib)
      dlclose(lib);
  }
  template <typename F> bool symbol(F &fn, const char *name) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
  }
  /// Loads libnvidia-ml.so.1 and finds the device; "" or why not.
  std::string open(const std::string &pciBusId) {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return "NVML (libnvidia-ml.so.1) not found";
    const char *missing = nullptr;
    auto need = [&](auto &fn, const char *name) {
      if (!missing && !symbol(fn, name))
        missing = name;
    };
    need(init, "nvmlInit_v2");
    need(shutdown, "nvmlShutdown");
    need(byPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
    need(clock, "nvmlDeviceGetClockInfo");
    need(maxClock, "nvmlDeviceGetMaxClockInfo");
    need(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    need(power, "nvmlDeviceGetPowerUsage");
    need(powerLimit, "nvmlDeviceGetEnforcedPowerLimit");
    if (missing) {
      init = nullptr; // not initialized: no shutdown
      return std::string("NVML lacks ") + missing;
    }
    if (int r = init(); r != 0) {
      init = nullptr;
      return "nvmlInit_v2 failed (NVML error " + std::to_string(r) + ")";
    }
    if (int r = byPciBusId(pciBusId.c_str(), &device); r != 0)
      return "NVML has no device at PCI bus id " + pciBusId + " (NVML error " +
             std::to_string(r) + ")";
    return "";
  }
  ClockSample sample() const {
    ClockSample s;
    unsigned long long why = 0;
    if (clock(device, kClockSm, &s.smMhz) != 0)
      s.smMhz = 0;
    if (power(device, &s.powerMw) != 0)
      s.powerMw = 0;
    if (reasons(device, &why) == 0)
      s.reasons = why;
    return s;
  }
};

ClockSummary summarizeClocks(const std::vector<ClockSample> &samples, unsigned maxMhz,
                             unsigned limitMw) {
  ClockSummary s;
  s.maxMhz = maxMhz;
  s.limitW = limitMw / 1000.0;
  std::vector<unsigned> mhz, mw;
  int capped = 0, thermal = 0;
  for (const ClockSample &c : samples) {
    if (c.smMhz == 0)
      continue; // a failed read
    mhz.push_back(c.smMhz);
    mw.push_back(c.powerMw);
    capped += (c.reasons & kClockSwPowerCap) != 0;
    thermal += (c.reasons & (kClockHwSlowdown | kClockSwThermal | kClockHwThermal |
                             kClockHwPowerBrake)) != 0;
  }
  s.samples = int(mhz.size());
  if (mhz.empty())
    return s;
  auto median = [](std::vector<unsigned> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? double(v[n / 2]) : (v[n / 2 - 1] + double(v[n / 2])) / 2;
  };
  s.medianMhz = unsigned(median(mhz) + 0.5);
  s.minMhz = *std::min_element(mhz.begin(), mhz.end());
  s.highestMhz = *std::max_element(mhz.begin(), mhz.end());
  s.powerW = median(mw) / 1000.0;
  s.powerCapped = double(capped) / s.samples;
  s.thermal = double(thermal) / s.samples;
  return s;
}

std::string describeClocks(const ClockSummary &s) {
  if (s.samples == 0)
    return "no samples";
  char buf[320];
  int n = std::snprintf(buf, sizeof buf, "SM clock median %u MHz (%u-%u", s.medianMhz,
                        s.minMhz, s.highestMhz);
  if (s.maxMhz)
    n += std::snprintf(buf + n, sizeof buf - n, "; maximum %u", s.maxMhz);
  n += std::snprintf(buf + n, sizeof buf - n, "), power %.0f W", s.powerW);
  if (s.limitW > 0)
    n += std::snprintf(buf + n, sizeof buf - n, " of %.0f W", s.limitW);
  n += std::snprintf(buf + n, sizeof buf - n, " (the driver's 1 s average)");
  n += std::snprintf(buf + n, sizeof buf - n, ", power-capped in %.0f%%", 100 * s.powerCapped);
  if (s.thermal > 0)
    n += std::snprintf(buf + n, sizeof buf - n, ", thermally slowed in %.0f%%", 100 * s.thermal);
  std::snprintf(buf + n, sizeof buf - n, " of %d samples", s.samples);
  return buf;
}

bool clocksLowered(const ClockSummary &s) {
  return s.samples > 0 && s.maxMhz > 0 && s.powerCapped + s.thermal > 0 &&
         s.medianMhz < 0.97 * s.maxMhz;
}

GpuClockSampler::GpuClockSampler() = default;

GpuClockSampler::~GpuClockSampler() { stop(); }

bool GpuClockSampler::start(const std::string &pciBusId, int periodMs) {
  stop();
  samples_.clear();
  if (!nvml_) {
    nvml_ = std::make_unique<Nvml>();
    why_ = nvml_->open(pciBusId);
    if (!why_.empty()) {
      nvml_.reset();
      return false;
    }
    if (nvml_->maxClock(nvml_->device, Nvml::kClockSm, &maxMhz_) != 0)
      maxMhz_ = 0;
    if (nvml_->powerLimit(nvml_->device, &limitMw_) != 0)
      limitMw_ = 0;
  }
  running_ = true;
  const Nvml *nvml = nvml_.get();
  thread_ = std::thread([this, nvml, periodMs] {
    while (running_) {
      ClockSample s = nvml->sample();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        samples_.push_back(s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(periodMs));
    }
  });
  return true;
}

ClockSummary GpuClockSampler::stop() {
  if (thread_.joinable()) {
    running_ = false;
    thread_.join();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return summarizeClocks(samples_, maxMhz_, limitMw_);
}

} // namespace dmrt
