//===- SafetensorsTarget.cpp - .safetensors through the runtime's reader ---===//
//
// Accepted files must convert to doubles (the comparison path) and write
// back into a file that reads back the same tensors and metadata.
//
//===----------------------------------------------------------------------===//
#include "tests/fuzz/FuzzTarget.h"

#include "runtime/Safetensors.h"


namespace dmc::fuzz {

namespace {

constexpr char kTarget[] = "safetensors";

} // namespace

int runSafetensors(const uint8_t *data, size_t size) {
  static const char kName[] = "fuzz.safetensors";
  dmrt::TensorFile file;
  std::string error;
  if (!dmrt::parseSafetensors(data, size, kName, file, error)) {
    requireNamed(error, kName, kTarget);
    return 0;
  }
  for (const dmrt::Tensor &t : file.tensors) {
    require(int64_t(t.bytes.size()) == t.numElements() * int64_t(dmrt::dtypeSize(t.dtype)),
            kTarget, "tensor '" + t.name + "' has bytes for another shape");
    if (t.numElements() <= (int64_t(1) << 20))
      require(int64_t(dmrt::toDoubles(t).size()) == t.numElements(), kTarget,
              "toDoubles of tensor '" + t.name + "' has another element count");
  }
  const std::string path = scratchDir() + "/written.safetensors";
  if (!dmrt::writeSafetensors(path, file, error)) {
    requireNamed(error, path, kTarget); // e.g. a name writeSafetensors reserves
    return 0;
  }
  dmrt::TensorFile again;
  require(dmrt::readSafetensors(path, again, error), kTarget,
          "writeSafetensors' output does not read back: " + error);
  require(again.metadata == file.metadata, kTarget, "metadata changed in a write and read");
  require(again.tensors.size() == file.tensors.size(), kTarget,
          "tensor count changed in a write and read");
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    const dmrt::Tensor &a = file.tensors[i], &b = again.tensors[i];
    require(a.name == b.name && a.dtype == b.dtype && a.shape == b.shape && a.bytes == b.bytes,
            kTarget, "tensor '" + a.name + "' changed in a write and read");
  }
  return 0;
}

} // namespace dmc::fuzz
