//===- NvrtcCompiler.cpp - Generated CUDA C++ -> cubin through NVRTC ------===//

#include "codegen/nvrtc/NvrtcCompiler.h"

#include "codegen/nvrtc/CubinCache.h"
#include "codegen/nvrtc/Sha256.h"

#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <thread>

namespace fs = std::filesystem;

namespace dmcgen {

namespace {

/// Bump when the cache file format or the meaning of a key changes.
constexpr const char *kCacheKeyVersion = "dmc-nvrtc-cache-v1";

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string joined(const std::vector<std::string> &items) {
  std::string s;
  for (const std::string &item : items)
    s += (s.empty() ? "" : ", ") + item;
  return s;
}

/// The full NVRTC option list for `options`, defaults first.
std::vector<std::string> nvrtcOptions(const CompileOptions &options) {
  std::vector<std::string> opts = {
      "--gpu-architecture=" + options.arch, "-std=c++17", "-default-device",
      std::string("--pre-include=") + kPreIncludedHeader};
  opts.insert(opts.end(), options.flags.begin(), options.flags.end());
  return opts;
}

/// SHA-256 over everything that determines the cubin.
std::string cacheKey(const CompileJob &job,
                     const std::vector<std::string> &opts) {
  Sha256 h;
  h.updateField(kCacheKeyVersion);
  h.updateField(nvrtcVersion());
  h.updateField(job.name); // lands in debug info under -G / -lineinfo
  h.updateField(job.source);
  h.updateField(std::to_string(opts.size()));
  for (const std::string &opt : opts)
    h.updateField(opt);
  const auto &headers = embeddedHeaders();
  h.updateField(std::to_string(headers.size()));
  for (const auto &[name, contents] : headers) {
    h.updateField(name);
    h.updateField(contents);
  }
  return Sha256::hex(h.finish());
}

/// `name` reduced to characters safe in a file name.
std::string fileStem(const std::string &name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.')
             ? c
             : '_';
  if (s.empty() || s.find_first_not_of('.') == std::string::npos)
    s = "kernel";
  return s.substr(0, 80);
}

/// Writes the failing source where a person can read it; returns a sentence
/// for the error message either way.
std::string keepFailedSource(const CompileJob &job, const CompileOptions &options,
                             const std::string &keyHex) {
  std::error_code ec;
  fs::path dir = options.failedSourceDir;
  if (dir.empty()) {
    dir = fs::temp_directory_path(ec);
    if (ec)
      dir = "/tmp";
  }
  fs::create_directories(dir, ec);
  fs::path file = dir / ("dmc-nvrtc-" + fileStem(job.name) + "-" +
                         keyHex.substr(0, 12) + ".cu");
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << job.source;
  out.flush();
  if (!out)
    return "the source could not be kept at " + file.string();
  return "source kept at " + file.string();
}

/// Owns an nvrtcProgram.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle)
      nvrtcDestroyProgram(&handle);
  }
};

std::string programLog(nvrtcProgram prog) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0)
    return "";
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS)
    return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n'))
    log.pop_back();
  return log;
}

} // namespace

std::string nvrtcVersion() {
  int major = 0, minor = 0;
  if (::nvrtcVersion(&major, &minor) != NVRTC_SUCCESS)
    return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string defaultCacheDir() {
  auto env = [](const char *name) -> std::string {
    const char *v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string d = env("DMC_CACHE_DIR"); !d.empty())
    return d;
  if (std::string x = env("XDG_CACHE_HOME"); !x.empty())
    return (fs::path(x) / "dmc" / "nvrtc").string();
  if (std::string home = env("HOME"); !home.empty())
    return (fs::path(home) / ".cache" / "dmc" / "nvrtc").string();
  return "";
}

const std::vector<std::string> &allowedArchs() {
  static const std::vector<std::string> archs = {"sm_80", "sm_89", "sm_90",
                                                 "sm_90a", "sm_100"};
  return archs;
}

bool compileToCubin(const CompileJob &job, const CompileOptions &options,
                    CompiledKernel &out, std::string &error) {
  Clock::time_point start = Clock::now();
  out = CompiledKernel();
  out.name = job.name;
  error.clear();

  const auto &archs = allowedArchs();
  if (std::find(archs.begin(), archs.end(), options.arch) == archs.end()) {
    error = "cannot compile '" + job.name + "': unknown GPU architecture '" +
            options.arch + "' (allowed: " + joined(archs) + ")";
    return false;
  }

  std::vector<std::string> opts = nvrtcOptions(options);
  std::string key = cacheKey(job, opts);
  std::string cachePath;
  if (!options.cacheDir.empty()) {
    cachePath = cubinCachePath(options.cacheDir, key);
    if (readCachedCubin(cachePath, out.cubin)) {
      out.fromCache = true;
      out.seconds = secondsSince(start);
      return true;
    }
  }

  const auto &headers = embeddedHeaders();
  std::vector<const char *> headerContents, headerNames;
  for (const auto &[name, contents] : headers) {
    headerNames.push_back(name.c_str());
    headerContents.push_back(contents.c_str());
  }
  std::string where = "'" + job.name + "' for " + options.arch;

  Program prog;
  nvrtcResult rc = nvrtcCreateProgram(
      &prog.handle, job.source.c_str(), job.name.c_str(), (int)headers.size(),
      headerContents.data(), headerNames.data());
  if (rc != NVRTC_SUCCESS) {
    prog.handle = nullptr;
    error = "NVRTC could not create the program " + where + ": " +
            nvrtcGetErrorString(rc);
    return false;
  }

  std::vector<const char *> optPtrs;
  for (const std::string &opt : opts)
    optPtrs.push_back(opt.c_str());
  rc = nvrtcCompileProgram(prog.handle, (int)optPtrs.size(), optPtrs.data());
  out.log = programLog(prog.handle);
  if (rc != NVRTC_SUCCESS) {
    error = "NVRTC failed to compile " + where + " (" +
            nvrtcGetErrorString(rc) + ", options: " + joined(opts) + "):\n" +
            out.log + "\n" + keepFailedSource(job, options, key);
    out.seconds = secondsSince(start);
    return false;
  }

  size_t size = 0;
  rc = nvrtcGetCUBINSize(prog.handle, &size);
  if (rc == NVRTC_SUCCESS && size == 0)
    rc = NVRTC_ERROR_INVALID_INPUT;
  if (rc == NVRTC_SUCCESS) {
    out.cubin.resize(size);
    rc = nvrtcGetCUBIN(prog.handle, out.cubin.data());
  }
  if (rc != NVRTC_SUCCESS) {
    out.cubin.clear();
    error = "NVRTC produced no cubin for " + where + ": " +
            nvrtcGetErrorString(rc);
    return false;
  }

  if (!cachePath.empty()) {
    std::string cacheError;
    if (!writeCachedCubin(options.cacheDir, cachePath, out.cubin, cacheError))
      out.log += (out.log.empty() ? "" : "\n") +
                 ("warning: cubin not cached: " + cacheError);
  }
  out.seconds = secondsSince(start);
  return true;
}

std::vector<CompiledKernel> compileAll(const std::vector<CompileJob> &jobs,
                                       const CompileOptions &options,
                                       unsigned threads,
                                       std::vector<std::string> &errors) {
  std::vector<CompiledKernel> results(jobs.size());
  errors.assign(jobs.size(), std::string());
  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = (unsigned)std::min<size_t>(threads, jobs.size());

  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();)
      compileToCubin(jobs[i], options, results[i], errors[i]);
  };
  // The calling thread is one of the workers; if a thread cannot be started,
  // the ones that did (and this one) take its share.
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) {
#if defined(__cpp_exceptions)
    try {
      pool.emplace_back(work);
    } catch (const std::system_error &) {
      break;
    }
#else
    pool.emplace_back(work);
#endif
  }
  work();
  for (std::thread &t : pool)
    t.join();
  return results;
}

} // namespace dmcgen
