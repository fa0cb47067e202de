//===- Safetensors.cpp - Read and write .safetensors files ----------------===//
//
// The JSON header is parsed with nlohmann::json in non-throwing mode and every
// value's type is checked before it is read, so no exception can escape.
//
//===----------------------------------------------------------------------===//
#include "runtime/Safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>

namespace dmrt {

namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

/// Upper bound on the header size we accept (the reference implementation
/// uses 100 MB); guards against allocating from a garbage length.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

bool fail(std::string &error, const std::string &path, const std::string &msg) {
  error = path + ": " + msg;
  return false;
}

/// Reads a non-negative JSON integer into `out`.
bool getUnsigned(const Json &j, uint64_t &out) {
  if (j.is_number_unsigned()) {
    out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    out = static_cast<uint64_t>(j.get<int64_t>());
    return true;
  }
  return false;
}

/// A tensor entry of the header before its bytes are copied out.
struct Entry {
  Tensor tensor;
  uint64_t begin = 0, end = 0;
};

/// Validates one header entry `name: value` against a buffer of `bufSize`
/// bytes; fills `e` or returns false with a message (without the path).
bool parseEntry(const std::string &name, const Json &value, uint64_t bufSize,
                Entry &e, std::string &msg) {
  std::string who = "tensor '" + name + "'";
  if (!value.is_object())
    return msg = who + ": entry is not a JSON object", false;
  auto dt = value.find("dtype");
  auto sh = value.find("shape");
  auto off = value.find("data_offsets");
  if (dt == value.end())
    return msg = who + ": missing 'dtype'", false;
  if (sh == value.end())
    return msg = who + ": missing 'shape'", false;
  if (off == value.end())
    return msg = who + ": missing 'data_offsets'", false;

  e.tensor.name = name;
  if (!dt->is_string() || !parseSafetensorsDType(dt->get<std::string>(), e.tensor.dtype))
    return msg = "bad dtype " + dt->dump() + " for " + who, false;

  if (!sh->is_array())
    return msg = who + ": 'shape' is not an array", false;
  // Element count with overflow guard: the byte size must fit in 63 bits.
  uint64_t numel = 1;
  const uint64_t limit = uint64_t(1) << 62;
  for (const Json &d : *sh) {
    if (!d.is_number_integer())
      return msg = who + ": 'shape' has a non-integer dimension", false;
    if (d.is_number_unsigned() ? false : d.get<int64_t>() < 0)
      return msg = who + ": negative dimension " + d.dump() + " in 'shape'",
             false;
    uint64_t dim = 0;
    getUnsigned(d, dim);
    if (dim > static_cast<uint64_t>(INT64_MAX))
      return msg = who + ": dimension " + d.dump() + " is too large", false;
    if (dim != 0 && numel > limit / dim)
      return msg = who + ": shape has too many elements", false;
    numel *= dim;
    e.tensor.shape.push_back(static_cast<int64_t>(dim));
  }

  if (!off->is_array() || off->size() != 2 || !getUnsigned((*off)[0], e.begin) ||
      !getUnsigned((*off)[1], e.end))
    return msg = who + ": 'data_offsets' must be two non-negative integers",
           false;
  if (e.begin > e.end)
    return msg = who + ": data_offsets [" + std::to_string(e.begin) + ", " +
                 std::to_string(e.end) + "] are reversed",
           false;
  if (e.end > bufSize)
    return msg = who + ": data_offsets [" + std::to_string(e.begin) + ", " +
                 std::to_string(e.end) + "] are out of range (data buffer is " +
                 std::to_string(bufSize) + " bytes)",
           false;
  uint64_t want = numel * dtypeSize(e.tensor.dtype);
  if (e.end - e.begin != want)
    return msg = who + ": data_offsets span " + std::to_string(e.end - e.begin) +
                 " bytes, which does not match shape * dtype = " +
                 std::to_string(want) + " bytes",
           false;
  return true;
}

/// The container after its size is known: `read(offset, dst, n)` copies n
/// bytes at `offset` (false on a read error). One parser for files and memory.
template <class Read>
bool parseContainer(uint64_t fileSize, Read read, const std::string &path, TensorFile &out,
                    std::string &error) {
  out = TensorFile();
  if (fileSize < 8)
    return fail(error, path,
                "file is too short (" + std::to_string(fileSize) +
                    " bytes) to hold the 8-byte header length");

  uint8_t lenBytes[8];
  if (!read(0, lenBytes, 8))
    return fail(error, path, "read error in the header length");
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | lenBytes[i];
  uint64_t rest = fileSize - 8;
  if (headerLen > rest)
    return fail(error, path,
                "header length " + std::to_string(headerLen) +
                    " exceeds the file size (" + std::to_string(rest) +
                    " bytes after the length): truncated header");
  if (headerLen > kMaxHeaderBytes)
    return fail(error, path,
                "header length " + std::to_string(headerLen) + " is too large");

  std::string text(headerLen, '\0');
  if (headerLen && !read(8, &text[0], headerLen))
    return fail(error, path, "read error in the header");

  // Duplicate top-level keys are silently merged by the parser, so count them
  // through the parse callback (depth 1 == keys of the outermost object).
  std::set<std::string> seen;
  std::string duplicate;
  auto onEvent = [&](int depth, Json::parse_event_t ev, Json &j) {
    if (ev == Json::parse_event_t::key && depth == 1 && j.is_string()) {
      const std::string &k = j.get_ref<const std::string &>();
      if (!seen.insert(k).second && duplicate.empty())
        duplicate = k;
    }
    return true;
  };
  Json header = Json::parse(text, onEvent, /*allow_exceptions=*/false);
  if (header.is_discarded())
    return fail(error, path, "header is not valid JSON");
  if (!header.is_object())
    return fail(error, path, "header is not a JSON object");
  if (!duplicate.empty())
    return fail(error, path, "duplicate tensor name '" + duplicate + "'");

  uint64_t bufSize = rest - headerLen;
  std::vector<Entry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object())
        return fail(error, path, "'__metadata__' is not a JSON object");
      for (auto m = it.value().begin(); m != it.value().end(); ++m) {
        if (!m.value().is_string())
          return fail(error, path,
                      "metadata value for '" + m.key() + "' is not a string");
        out.metadata[m.key()] = m.value().get<std::string>();
      }
      continue;
    }
    Entry e;
    std::string msg;
    if (!parseEntry(it.key(), it.value(), bufSize, e, msg))
      return fail(error, path, msg);
    entries.push_back(std::move(e));
  }

  // File order is the order of the data; check that no two ranges overlap.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry &a, const Entry &b) {
                     return a.begin < b.begin ||
                            (a.begin == b.begin && a.end < b.end);
                   });
  for (size_t i = 1; i < entries.size(); ++i) {
    const Entry &a = entries[i - 1], &b = entries[i];
    if (b.begin < a.end)
      return fail(error, path,
                  "data_offsets of tensor '" + b.tensor.name +
                      "' overlap those of tensor '" + a.tensor.name + "'");
  }

  uint64_t dataStart = 8 + headerLen;
  for (Entry &e : entries) {
    e.tensor.bytes.resize(e.end - e.begin);
    if (!e.tensor.bytes.empty() &&
        !read(dataStart + e.begin, e.tensor.bytes.data(), e.tensor.bytes.size()))
      return fail(error, path,
                  "read error in the data of tensor '" + e.tensor.name + "'");
    out.tensors.push_back(std::move(e.tensor));
  }
  return true;
}

} // namespace

bool readSafetensors(const std::string &path, TensorFile &out,
                     std::string &error) {
  out = TensorFile();
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail(error, path, "cannot open file");
  in.seekg(0, std::ios::end);
  std::streamoff fileSize = in.tellg();
  in.seekg(0, std::ios::beg);
  if (fileSize < 0)
    return fail(error, path, "cannot determine the file size");
  auto read = [&](uint64_t offset, void *dst, uint64_t n) {
    in.seekg(static_cast<std::streamoff>(offset));
    return bool(in.read(static_cast<char *>(dst), static_cast<std::streamsize>(n)));
  };
  return parseContainer(static_cast<uint64_t>(fileSize), read, path, out, error);
}

bool parseSafetensors(const uint8_t *data, size_t size, const std::string &name,
                      TensorFile &out, std::string &error) {
  auto read = [&](uint64_t offset, void *dst, uint64_t n) {
    if (offset > size || n > size - offset)
      return false;
    std::copy(data + offset, data + offset + n, static_cast<uint8_t *>(dst));
    return true;
  };
  return parseContainer(size, read, name, out, error);
}

bool writeSafetensors(const std::string &path, const TensorFile &in,
                      std::string &error) {
  OrderedJson header = OrderedJson::object();
  if (!in.metadata.empty()) {
    OrderedJson meta = OrderedJson::object();
    for (const auto &kv : in.metadata)
      meta[kv.first] = kv.second;
    header["__metadata__"] = std::move(meta);
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  for (const Tensor &t : in.tensors) {
    std::string who = "tensor '" + t.name + "'";
    if (t.name == "__metadata__")
      return fail(error, path, "'__metadata__' is a reserved name");
    if (!names.insert(t.name).second)
      return fail(error, path, "duplicate tensor name '" + t.name + "'");
    OrderedJson shape = OrderedJson::array();
    for (int64_t d : t.shape) {
      if (d < 0)
        return fail(error, path, who + ": negative dimension " +
                                     std::to_string(d) + " in shape");
      shape.push_back(d);
    }
    uint64_t want = static_cast<uint64_t>(t.numElements()) * dtypeSize(t.dtype);
    if (t.bytes.size() != want)
      return fail(error, path,
                  who + ": holds " + std::to_string(t.bytes.size()) +
                      " bytes, but shape * dtype needs " + std::to_string(want));
    OrderedJson entry = OrderedJson::object();
    entry["dtype"] = safetensorsDTypeName(t.dtype);
    entry["shape"] = std::move(shape);
    entry["data_offsets"] = {offset, offset + want};
    header[t.name] = std::move(entry);
    offset += want;
  }

  // Invalid UTF-8 in a name or value is replaced rather than thrown on.
  std::string text =
      header.dump(-1, ' ', false, Json::error_handler_t::replace);
  while (text.size() % 8 != 0)
    text.push_back(' ');

  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os)
    return fail(error, path, "cannot open file for writing");
  uint8_t lenBytes[8];
  uint64_t len = text.size();
  for (int i = 0; i < 8; ++i)
    lenBytes[i] = static_cast<uint8_t>(len >> (8 * i));
  os.write(reinterpret_cast<const char *>(lenBytes), 8);
  os.write(text.data(), static_cast<std::streamsize>(text.size()));
  for (const Tensor &t : in.tensors)
    os.write(reinterpret_cast<const char *>(t.bytes.data()),
             static_cast<std::streamsize>(t.bytes.size()));
  os.flush();
  if (!os)
    return fail(error, path, "write error");
  return true;
}

} // namespace dmrt
