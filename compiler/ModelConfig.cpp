//===- ModelConfig.cpp - parsing and validating model.json ----------------===//
#include "compiler/ModelConfig.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <cmath>
#include <cstdio>

using llvm::StringRef;
namespace json = llvm::json;

namespace dmc {

const char *layerKindName(LayerKind kind) {
  switch (kind) {
  case LayerKind::Encoder:
    return "encoder";
  case LayerKind::Decoder:
    return "decoder";
  case LayerKind::Gpt:
    return "gpt";
  }
  return "?";
}

namespace {

constexpr StringRef kTopKeys[] = {"name",     "description", "kind",          "batch",
                                  "seq",      "memory_seq",  "hidden",        "heads",
                                  "head_dim", "ffn",         "activation",    "norm",
                                  "dropout",  "layernorm_eps", "bias",        "key_padding",
                                  "dtype",    "layers"};
constexpr StringRef kDropoutKeys[] = {"attention", "hidden", "activation"};

/// A number as people write it: 0.1, 1, 1e-12.
std::string shortNumber(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

/// Collects the first error; every message names the file and field.
class Reader {
public:
  Reader(StringRef file) : file(file.str()) {}

  bool failed() const { return !error.empty(); }
  llvm::Error takeError() {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  }
  void fail(const llvm::Twine &msg) {
    if (error.empty())
      error = file + ": " + msg.str();
  }

  /// Rejects keys outside `allowed`, suggesting the closest valid one.
  void checkKeys(const json::Object &obj, llvm::ArrayRef<StringRef> allowed,
                 StringRef where) {
    for (const auto &kv : obj) {
      StringRef key = kv.first;
      if (llvm::is_contained(allowed, key))
        continue;
      StringRef best;
      unsigned bestDistance = 4;
      for (StringRef candidate : allowed) {
        unsigned d = key.edit_distance(candidate, true, bestDistance);
        if (d < bestDistance)
          bestDistance = d, best = candidate;
      }
      std::string msg = (where + "unknown field '" + key + "'").str();
      if (!best.empty())
        msg += (llvm::Twine("; did you mean '") + best + "'?").str();
      else {
        msg += "; valid fields are";
        for (StringRef a : allowed)
          msg += " " + a.str();
      }
      fail(msg);
    }
  }

  /// A positive integer <= `max`; 0 when absent and not `required`.
  int64_t positive(const json::Object &obj, StringRef key, int64_t max, bool required) {
    const json::Value *v = obj.get(key);
    if (!v) {
      if (required)
        fail("missing required field '" + key + "'");
      return 0;
    }
    std::optional<int64_t> n = v->getAsInteger();
    if (!n) {
      fail(llvm::formatv("field '{0}' must be an integer, got {1}", key, *v));
      return 0;
    }
    if (*n <= 0 || *n > max) {
      fail(llvm::formatv("field '{0}' is {1}; it must be between 1 and {2}", key, *n, max));
      return 0;
    }
    return *n;
  }

  std::string choice(const json::Object &obj, StringRef key, llvm::ArrayRef<StringRef> allowed,
                     StringRef fallback) {
    const json::Value *v = obj.get(key);
    if (!v)
      return fallback.str();
    std::optional<StringRef> s = v->getAsString();
    if (!s || !llvm::is_contained(allowed, *s)) {
      std::string list;
      for (StringRef a : allowed)
        list += (list.empty() ? "" : ", ") + ("\"" + a + "\"").str();
      fail(llvm::formatv("field '{0}' is {1}; expected one of {2}", key, *v, list));
      return fallback.str();
    }
    return s->str();
  }

  bool boolean(const json::Object &obj, StringRef key, bool fallback) {
    const json::Value *v = obj.get(key);
    if (!v)
      return fallback;
    if (std::optional<bool> b = v->getAsBoolean())
      return *b;
    fail(llvm::formatv("field '{0}' must be true or false, got {1}", key, *v));
    return fallback;
  }

  /// A number in [lo, hi) (or (lo, hi) when `openLow`).
  double number(const json::Value &v, StringRef key, double lo, double hi, bool openLow) {
    std::optional<double> d = v.getAsNumber();
    if (!d || std::isnan(*d) || *d < lo || (openLow && *d == lo) || *d >= hi) {
      std::string value = d ? shortNumber(*d) : llvm::formatv("{0}", v).str();
      fail(llvm::formatv("field '{0}' is {1}; it must be a number in {2}{3}, {4})", key, value,
                         openLow ? "(" : "[", shortNumber(lo), shortNumber(hi)));
      return lo;
    }
    return *d;
  }

private:
  std::string file;
  std::string error;
};

/// llvm::json reports "[line:col, byte=N]: message"; say it as file:line:col.
std::string describeJsonError(StringRef file, llvm::Error err) {
  std::string msg = llvm::toString(std::move(err));
  llvm::SmallVector<StringRef> m;
  if (llvm::Regex("^\\[([0-9]+):([0-9]+), byte=[0-9]+\\]: (.*)$").match(msg, &m))
    return (file + ":" + m[1] + ":" + m[2] + ": malformed JSON: " + m[3]).str();
  return (file + ": malformed JSON: " + msg).str();
}

} // namespace

llvm::Expected<ModelConfig> parseModelConfig(StringRef text, StringRef fileName) {
  llvm::Expected<json::Value> root = json::parse(text);
  if (!root)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   describeJsonError(fileName, root.takeError()));
  Reader r(fileName);
  const json::Object *obj = root->getAsObject();
  if (!obj)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   fileName + ": the model description must be a JSON object");
  r.checkKeys(*obj, kTopKeys, "");

  ModelConfig c;
  if (const json::Value *v = obj->get("name")) {
    if (std::optional<StringRef> s = v->getAsString(); s && !s->empty())
      c.name = s->str();
    else
      r.fail("field 'name' must be a non-empty string");
  }
  std::string kind = r.choice(*obj, "kind", {"encoder", "decoder", "gpt"}, "");
  if (!obj->get("kind"))
    r.fail("missing required field 'kind' (encoder, decoder or gpt)");
  c.kind = kind == "decoder" ? LayerKind::Decoder
           : kind == "gpt"   ? LayerKind::Gpt
                             : LayerKind::Encoder;

  constexpr int64_t kMaxSeq = 1 << 20, kMaxWidth = 1 << 18;
  c.batch = r.positive(*obj, "batch", 1 << 16, true);
  c.seq = r.positive(*obj, "seq", kMaxSeq, true);
  c.hidden = r.positive(*obj, "hidden", kMaxWidth, true);
  c.heads = r.positive(*obj, "heads", 1 << 12, true);
  c.ffn = r.positive(*obj, "ffn", kMaxWidth, true);
  c.headDim = r.positive(*obj, "head_dim", kMaxWidth, false);
  c.memorySeq = r.positive(*obj, "memory_seq", kMaxSeq, false);
  if (obj->get("layers"))
    c.layers = r.positive(*obj, "layers", 1024, false);
  if (!r.failed()) {
    if (c.kind == LayerKind::Decoder && !c.memorySeq)
      r.fail("a decoder needs field 'memory_seq' (the encoder memory length)");
    if (c.kind != LayerKind::Decoder && c.memorySeq)
      r.fail(llvm::Twine("field 'memory_seq' applies to decoder layers only, not ") + kind);
    if (!c.headDim && c.hidden % c.heads != 0)
      r.fail(llvm::formatv("field 'hidden' ({0}) is not divisible by field 'heads' ({1}); "
                           "divide evenly or give 'head_dim'",
                           c.hidden, c.heads));
    if (!c.headDim)
      c.headDim = c.hidden / c.heads;
  }

  c.activation = r.choice(*obj, "activation", {"gelu", "gelu_tanh", "relu"},
                          c.kind == LayerKind::Encoder ? "gelu"
                          : c.kind == LayerKind::Gpt   ? "gelu_tanh"
                                                       : "relu");
  c.preNorm = r.choice(*obj, "norm", {"pre", "post"},
                       c.kind == LayerKind::Gpt ? "pre" : "post") == "pre";
  {
    using dmrt::DType;
    std::string dtype = r.choice(*obj, "dtype",
                                 {dmrt::dtypeName(DType::BF16), dmrt::dtypeName(DType::F16),
                                  dmrt::dtypeName(DType::F32)},
                                 dmrt::dtypeName(DType::BF16));
    dmrt::parseDType(dtype, c.dtype); // on a bad value r has failed; c.dtype stays bf16
  }
  c.bias = r.boolean(*obj, "bias", true);
  c.keyPadding = r.boolean(*obj, "key_padding", false);
  if (const json::Value *v = obj->get("layernorm_eps"))
    c.layernormEps = r.number(*v, "layernorm_eps", 0.0, 1.0, /*openLow=*/true);

  if (const json::Value *v = obj->get("dropout")) {
    if (const json::Object *d = v->getAsObject()) {
      r.checkKeys(*d, kDropoutKeys, "in 'dropout': ");
      double *slots[] = {&c.dropoutAttention, &c.dropoutHidden, &c.dropoutActivation};
      for (auto [key, slot] : llvm::zip(kDropoutKeys, slots))
        if (const json::Value *p = d->get(key))
          *slot = r.number(*p, ("dropout." + key).str(), 0.0, 1.0, false);
    } else {
      double p = r.number(*v, "dropout", 0.0, 1.0, false);
      c.dropoutAttention = c.dropoutHidden = c.dropoutActivation = p;
    }
  }

  if (!r.failed()) {
    // The largest tensors: attention scores and FFN activations.
    int64_t keys = c.kind == LayerKind::Decoder ? std::max(c.seq, c.memorySeq) : c.seq;
    double scores = double(c.batch) * c.heads * c.seq * keys;
    double ffnActs = double(c.batch) * c.seq * c.ffn;
    constexpr double kMaxElements = double(int64_t(1) << 34);
    if (scores > kMaxElements || ffnActs > kMaxElements)
      r.fail(llvm::formatv("sizes are absurd: the attention scores (batch*heads*seq*keys) "
                           "would have {0} elements and the FFN activations {1}; the limit "
                           "is 2^34",
                           scores, ffnActs));
  }
  if (r.failed())
    return r.takeError();
  return c;
}

llvm::Expected<ModelConfig> loadModelConfig(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   path + ": cannot read: " + buffer.getError().message());
  return parseModelConfig((*buffer)->getBuffer(), path);
}

} // namespace dmc
