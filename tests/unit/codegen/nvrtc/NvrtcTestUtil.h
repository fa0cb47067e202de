//===- NvrtcTestUtil.h - Helpers for the NVRTC driver tests -------*- C++ -*-===//
#ifndef DMC_TESTS_NVRTC_NVRTCTESTUTIL_H
#define DMC_TESTS_NVRTC_NVRTCTESTUTIL_H

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace dmcgen::test {

/// A fresh directory under the system temp dir, removed with the object.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "dmc-nvrtc-test-XXXXXX")
            .string();
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    path_ = mkdtemp(buf.data()) ? buf.data() : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }
  std::string sub(const std::string &name) const {
    return (std::filesystem::path(path_) / name).string();
  }

private:
  std::string path_;
};

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

inline bool isElf(const std::vector<char> &b) {
  return b.size() >= 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' &&
         b[3] == 'F';
}

/// True iff `bytes` contains `needle` (e.g. a kernel's symbol name).
inline bool contains(const std::vector<char> &bytes, const std::string &needle) {
  return std::search(bytes.begin(), bytes.end(), needle.begin(),
                     needle.end()) != bytes.end();
}

/// The regular files directly under `dir`.
inline std::vector<std::string> filesIn(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_regular_file())
      files.push_back(e.path().string());
  return files;
}

inline const char *kSmallKernel = R"(
extern "C" __global__ void axpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
)";

} // namespace dmcgen::test

#endif // DMC_TESTS_NVRTC_NVRTCTESTUTIL_H
