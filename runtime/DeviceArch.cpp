//===- DeviceArch.cpp - Does a bundle's arch run on this device? ----------===//
#include "runtime/DeviceArch.h"

#include <cctype>

namespace dmrt {

bool archRunsOn(const std::string &arch, int major, int minor, std::string &error) {
  std::string digits;
  size_t i = 3;
  if (arch.compare(0, 3, "sm_") != 0) {
    error = "arch \"" + arch + "\" is not of the form sm_<major><minor>[a|f]";
    return false;
  }
  while (i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])))
    digits += arch[i++];
  std::string suffix = arch.substr(i);
  if (digits.size() < 2 || digits.size() > 3 || (suffix != "" && suffix != "a" && suffix != "f")) {
    error = "arch \"" + arch + "\" is not of the form sm_<major><minor>[a|f]";
    return false;
  }
  int archMajor = std::stoi(digits.substr(0, digits.size() - 1));
  int archMinor = digits.back() - '0';
  std::string device = "compute capability " + std::to_string(major) + "." +
                       std::to_string(minor) + " (sm_" + std::to_string(major) +
                       std::to_string(minor) + ")";
  if (suffix == "a" && (major != archMajor || minor != archMinor)) {
    error = "the bundle is compiled for " + arch + ", which runs only on compute capability " +
            std::to_string(archMajor) + "." + std::to_string(archMinor) +
            "; this device has " + device + ": recompile with dmc compile --arch sm_" +
            std::to_string(major) + std::to_string(minor) + (major >= 9 ? "a" : "");
    return false;
  }
  if (major != archMajor || minor < archMinor) {
    error = "the bundle is compiled for " + arch + " (compute capability " +
            std::to_string(archMajor) + "." + std::to_string(archMinor) +
            "); this device has " + device + ": recompile with dmc compile --arch sm_" +
            std::to_string(major) + std::to_string(minor) + (major >= 9 ? "a" : "");
    return false;
  }
  return true;
}

} // namespace dmrt
