//===- JsonReader.h - type-checked reading of a JSON document -------------===//
//
// Every access checks the value's type and range; the first failure sets an
// error naming the file, the JSON path (e.g. `kernels[3].grid`) and what was
// expected. No exceptions: nlohmann::json is used with checks before access.
//
//===----------------------------------------------------------------------===//
#ifndef DMRT_JSONREADER_H
#define DMRT_JSONREADER_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace dmrt {

using json = nlohmann::json;

inline std::string describeValue(const json &v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 40)
    s = s.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + s;
}

/// Type-checked access to a JSON document; the first failure sets `error`.
class Reader {
public:
  Reader(const std::string &file, std::string &error)
      : file_(file), error_(error) {}

  bool fail(const std::string &path, const std::string &what) {
    error_ = file_ + ": " + (path.empty() ? std::string("") : path + ": ") +
             what;
    return false;
  }

  /// `obj` must be an object with exactly the keys in `allowed`.
  bool object(const json &obj, const std::string &path,
              std::initializer_list<const char *> allowed) {
    if (!obj.is_object())
      return fail(path, "expected an object, got " + describeValue(obj));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      for (const char *a : allowed)
        ok |= it.key() == a;
      if (!ok)
        return fail(join(path, it.key()), "unknown field");
    }
    return true;
  }

  bool field(const json &obj, const std::string &path, const char *key,
             const json *&out) {
    auto it = obj.find(key);
    if (it == obj.end())
      return fail(join(path, key), "missing field");
    out = &*it;
    return true;
  }

  bool str(const json &obj, const std::string &path, const char *key,
           std::string &out) {
    const json *v;
    if (!field(obj, path, key, v))
      return false;
    if (!v->is_string())
      return fail(join(path, key), "expected a string, got " + describeValue(*v));
    out = v->get<std::string>();
    return true;
  }

  bool integer(const json &v, const std::string &path, int64_t &out,
               int64_t min, const char *what = nullptr) {
    bool ok = v.is_number_integer();
    if (ok && v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      ok = false;
    if (ok)
      out = v.get<int64_t>();
    if (!ok || out < min)
      return fail(path, std::string("expected ") +
                            (what ? what
                                  : min == 0   ? "a non-negative integer"
                                  : min == 1   ? "a positive integer"
                                               : "an integer") +
                            ", got " + describeValue(v));
    return true;
  }

  bool integer(const json &obj, const std::string &path, const char *key,
               int64_t &out, int64_t min) {
    const json *v;
    return field(obj, path, key, v) && integer(*v, join(path, key), out, min);
  }

  /// The "format" and "version" fields a dmc file starts with: `format` must
  /// be `expected` and `version` in [oldest, newest]; `reader` ("this
  /// runtime") names who cannot read another version.
  bool header(const json &root, const std::string &expected, int64_t oldest, int64_t newest,
              const std::string &reader, std::string &format, int64_t &version) {
    if (!str(root, "", "format", format))
      return false;
    if (format != expected)
      return fail("format", "expected \"" + expected + "\", got \"" + format + "\"");
    if (!integer(root, "", "version", version, 0))
      return false;
    if (version >= oldest && version <= newest)
      return true;
    std::string range = oldest == newest ? "version " + std::to_string(newest)
                                         : "versions " + std::to_string(oldest) + " to " +
                                               std::to_string(newest);
    return fail("version", "unsupported version " + std::to_string(version) + " (" + reader +
                               " reads " + range + ")");
  }

  bool number(const json &obj, const std::string &path, const char *key,
              double &out) {
    const json *v;
    if (!field(obj, path, key, v))
      return false;
    if (!v->is_number())
      return fail(join(path, key), "expected a number, got " + describeValue(*v));
    out = v->get<double>();
    return true;
  }

  bool boolean(const json &obj, const std::string &path, const char *key,
               bool &out) {
    const json *v;
    if (!field(obj, path, key, v))
      return false;
    if (!v->is_boolean())
      return fail(join(path, key), "expected true or false, got " + describeValue(*v));
    out = v->get<bool>();
    return true;
  }

  bool array(const json &obj, const std::string &path, const char *key,
             const json *&out) {
    if (!field(obj, path, key, out))
      return false;
    if (!out->is_array())
      return fail(join(path, key), "expected an array, got " + describeValue(*out));
    return true;
  }

  bool intArray(const json &obj, const std::string &path, const char *key,
                std::vector<int64_t> &out, int64_t min) {
    const json *v;
    if (!array(obj, path, key, v))
      return false;
    out.clear();
    for (size_t i = 0; i < v->size(); ++i) {
      int64_t x;
      if (!integer((*v)[i], index(join(path, key), i), x, min))
        return false;
      out.push_back(x);
    }
    return true;
  }

  static std::string join(const std::string &path, const std::string &key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string index(const std::string &path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

private:
  std::string file_;
  std::string &error_;
};


} // namespace dmrt

#endif // DMRT_JSONREADER_H
