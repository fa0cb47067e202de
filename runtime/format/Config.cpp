//===- Config.cpp - config.json: reader and writer ------------------------===//
#include "runtime/format/Config.h"
#include "runtime/format/GemmAlgoConfig.h"

#include "runtime/format/GemmDescriptor.h"
#include "runtime/format/JsonReader.h"

#include <set>

namespace dmrt {
namespace {

using ojson = nlohmann::ordered_json;

/// Letters, each once: a layout.
bool validDims(const std::string &dims) {
  std::set<char> seen;
  for (char c : dims)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) || !seen.insert(c).second)
      return false;
  return !dims.empty();
}

bool dims(Reader &r, const json &o, const std::string &path, const char *key, std::string &out) {
  if (!r.str(o, path, key, out))
    return false;
  if (!validDims(out))
    return r.fail(Reader::join(path, key),
                  "expected dimension letters, each once (e.g. \"bjhp\"), got \"" + out + "\"");
  return true;
}

/// A name, non-empty and unique within its list.
bool name(Reader &r, const json &o, const std::string &path, const char *key, std::string &out,
          std::set<std::string> &seen) {
  if (!r.str(o, path, key, out))
    return false;
  if (out.empty())
    return r.fail(Reader::join(path, key), "expected a non-empty name");
  if (!seen.insert(out).second)
    return r.fail(Reader::join(path, key), "\"" + out + "\" appears twice");
  return true;
}

bool oneOf(Reader &r, const json &o, const std::string &path, const char *key, std::string &out,
           std::initializer_list<const char *> allowed) {
  if (!r.str(o, path, key, out))
    return false;
  std::string list;
  for (const char *a : allowed) {
    if (out == a)
      return true;
    list += std::string(list.empty() ? "" : ", ") + "\"" + a + "\"";
  }
  return r.fail(Reader::join(path, key), "expected one of " + list + ", got \"" + out + "\"");
}

bool parseKernel(Reader &r, const json &o, const std::string &p, ConfigKernel &k,
                 std::set<std::string> &names) {
  if (!r.object(o, p, {"name", "lane_dim", "tx", "ty", "per_thread", "vec", "split", "describe",
                       "block_m", "block_n", "warps", "wgmma", "min_blocks", "unroll"}) ||
      !name(r, o, p, "name", k.name, names) || !r.str(o, p, "lane_dim", k.laneDim) ||
      !r.integer(o, p, "tx", k.tx, 1) || !r.integer(o, p, "ty", k.ty, 1) ||
      !r.integer(o, p, "per_thread", k.perThread, 1) || !r.integer(o, p, "vec", k.vec, 1) ||
      !r.integer(o, p, "split", k.split, 1) || !r.str(o, p, "describe", k.describe))
    return false;
  if (o.contains("unroll") && !r.integer(o, p, "unroll", k.unroll, 0))
    return false;
  // Tiles: all three or none.
  int tiles = int(o.contains("block_m")) + int(o.contains("block_n")) + int(o.contains("warps"));
  if (tiles != 0 && tiles != 3)
    return r.fail(p, "a fused attention kernel's tiles need all of block_m, block_n and warps");
  if (tiles == 3 &&
      (!r.integer(o, p, "block_m", k.blockM, 1) || !r.integer(o, p, "block_n", k.blockN, 1) ||
       !r.integer(o, p, "warps", k.warps, 1)))
    return false;
  if (o.contains("wgmma")) {
    if (tiles == 0)
      return r.fail(p + ".wgmma", "only a fused attention kernel (with block_m, block_n and "
                                  "warps) has wgmma");
    if (!r.boolean(o, p, "wgmma", k.wgmma))
      return false;
  }
  if (o.contains("min_blocks")) {
    if (tiles == 0)
      return r.fail(p + ".min_blocks", "only a fused attention kernel (with block_m, block_n "
                                       "and warps) has min_blocks");
    if (!r.integer(o, p, "min_blocks", k.minBlocks, 1))
      return false;
  }
  if (!k.laneDim.empty() && !validDims(k.laneDim))
    return r.fail(p + ".lane_dim", "expected \"\" (no lane dim) or one dimension letter, got \"" +
                                       k.laneDim + "\"");
  if (k.laneDim.size() > 1)
    return r.fail(p + ".lane_dim", "expected \"\" (no lane dim) or one dimension letter, got \"" +
                                       k.laneDim + "\"");
  return true;
}

bool parseContraction(Reader &r, const json &o, const std::string &p, ConfigContraction &c,
                      std::set<std::string> &names) {
  const json *strides;
  if (!r.object(o, p, {"name", "equation", "swap", "transa", "transb", "batch", "batch_strides",
                       "algorithm", "epilogue"}) ||
      !name(r, o, p, "name", c.name, names) || !r.str(o, p, "equation", c.equation) ||
      !r.boolean(o, p, "swap", c.swap) || !oneOf(r, o, p, "transa", c.transa, {"N", "T"}) ||
      !oneOf(r, o, p, "transb", c.transb, {"N", "T"}) || !r.integer(o, p, "batch", c.batch, 1) ||
      !r.array(o, p, "batch_strides", strides))
    return false;
  // "a,b->d": three layouts.
  size_t comma = c.equation.find(','), arrow = c.equation.find("->");
  if (comma == std::string::npos || arrow == std::string::npos || arrow < comma ||
      !validDims(c.equation.substr(0, comma)) ||
      !validDims(c.equation.substr(comma + 1, arrow - comma - 1)) ||
      !validDims(c.equation.substr(arrow + 2)))
    return r.fail(p + ".equation", "expected \"A,B->D\" with three layouts of dimension "
                                   "letters (e.g. \"bhjp,bhkp->bhjk\"), got \"" +
                                       c.equation + "\"");
  if (strides->size() != 3)
    return r.fail(p + ".batch_strides", "expected 3 strides (cuBLASLt's A, B, D), got " +
                                            describeValue(*strides));
  int64_t *out[3] = {&c.strideA, &c.strideB, &c.strideD};
  for (size_t i = 0; i < 3; ++i)
    if (!r.integer((*strides)[i], Reader::index(p + ".batch_strides", i), *out[i], 0))
      return false;
  if (!r.str(o, p, "algorithm", c.algorithm))
    return false;
  if (c.algorithm != kHeuristicAlgorithm) {
    GemmAlgoConfig algo;
    std::string why;
    if (!parseAlgorithm(c.algorithm, algo, why))
      return r.fail(p + ".algorithm", why);
  }
  Epilogue e;
  if (!r.str(o, p, "epilogue", c.epilogue))
    return false;
  if (!parseEpilogue(c.epilogue, e))
    return r.fail(p + ".epilogue", "expected a cuBLASLt epilogue in lower case (\"none\", "
                                   "\"bias\", \"gelu_aux_bias\", \"dgelu_bgrad\", \"bgrada\", "
                                   "...), got \"" + c.epilogue + "\"");
  return true;
}

} // namespace

bool parseConfig(const std::string &text, const std::string &fileName, Configuration &out,
                 std::string &error) {
  Reader r(fileName, error);
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return r.fail("", "not valid JSON");
  if (!r.object(root, "", {"format", "version", "model", "tensors", "transposes", "kernels",
                           "contractions", "prediction", "paths"}))
    return false;
  Configuration c;
  if (!r.header(root, "dmc-config", 1, kConfigVersion, "this reader", c.format, c.version))
    return false;
  if (auto it = root.find("paths"); it != root.end()) {
    if (c.version < 3)
      return r.fail("paths", "not in config version " + std::to_string(c.version) +
                                 " (paths need version 3)");
    ConfigPaths &p = c.paths;
    if (!r.object(*it, "paths",
                  {"fused_attention", "column_fusion", "bias_grads", "gemm_addends",
                   "stack_in_place"}) ||
        !r.boolean(*it, "paths", "fused_attention", p.fusedAttention) ||
        !r.boolean(*it, "paths", "column_fusion", p.columnFusion) ||
        !oneOf(r, *it, "paths", "bias_grads", p.biasGrads, {"saving", "all", "none"}) ||
        !r.boolean(*it, "paths", "gemm_addends", p.gemmAddends) ||
        !r.boolean(*it, "paths", "stack_in_place", p.stackInPlace))
      return false;
    c.hasPaths = true;
  }
  if (auto it = root.find("prediction"); it != root.end()) {
    if (c.version < 2)
      return r.fail("prediction", "not in config version 1 (a prediction needs version 2)");
    ConfigPrediction &p = c.prediction;
    if (!r.object(*it, "prediction",
                  {"device", "database", "forward_us", "backward_us", "steps",
                   "calibration"}) ||
        !r.str(*it, "prediction", "device", p.device) ||
        !r.str(*it, "prediction", "database", p.database) ||
        !r.number(*it, "prediction", "forward_us", p.forwardUs) ||
        !r.number(*it, "prediction", "backward_us", p.backwardUs))
      return false;
    for (auto [key, v] : {std::make_pair("forward_us", p.forwardUs),
                          std::make_pair("backward_us", p.backwardUs)})
      if (!(v >= 0))
        return r.fail(std::string("prediction.") + key,
                      "expected a time >= 0 in microseconds, got " + std::to_string(v));
    if (auto s = it->find("steps"); s != it->end()) {
      if (!s->is_object())
        return r.fail("prediction.steps", "expected an object of step name -> microseconds");
      for (auto step = s->begin(); step != s->end(); ++step) {
        const std::string where = "prediction.steps." + step.key();
        if (!step->is_number() || !(step->get<double>() >= 0))
          return r.fail(where, "expected a time >= 0 in microseconds, got " + step->dump());
        p.steps.emplace_back(step.key(), step->get<double>());
      }
    }
    if (auto cal = it->find("calibration"); cal != it->end()) {
      if (!r.object(*cal, "prediction.calibration",
                    {"default_measured_us", "default_predicted_us"}) ||
          !r.number(*cal, "prediction.calibration", "default_measured_us",
                    p.defaultMeasuredUs) ||
          !r.number(*cal, "prediction.calibration", "default_predicted_us",
                    p.defaultPredictedUs))
        return false;
      for (auto [key, v] : {std::make_pair("default_measured_us", p.defaultMeasuredUs),
                            std::make_pair("default_predicted_us", p.defaultPredictedUs)})
        if (!(v > 0))
          return r.fail(std::string("prediction.calibration.") + key,
                        "expected a time > 0 in microseconds, got " + std::to_string(v));
    }
    c.hasPrediction = true;
  }
  if (!r.str(root, "", "model", c.model))
    return false;

  const json *arr;
  std::set<std::string> names;
  if (!r.array(root, "", "tensors", arr))
    return false;
  for (size_t i = 0; i < arr->size(); ++i) {
    std::string p = Reader::index("tensors", i);
    ConfigTensor t;
    if (!r.object((*arr)[i], p, {"name", "dims"}) || !name(r, (*arr)[i], p, "name", t.name, names) ||
        !dims(r, (*arr)[i], p, "dims", t.dims))
      return false;
    c.tensors.push_back(t);
  }

  if (!r.array(root, "", "transposes", arr))
    return false;
  std::set<std::string> uses;
  for (size_t i = 0; i < arr->size(); ++i) {
    std::string p = Reader::index("transposes", i);
    const json &o = (*arr)[i];
    ConfigTranspose t;
    if (!r.object(o, p, {"contraction", "operand", "tensor", "dims", "bytes"}) ||
        !r.str(o, p, "contraction", t.contraction) ||
        !oneOf(r, o, p, "operand", t.operand, {"a", "b", "d"}) ||
        !r.str(o, p, "tensor", t.tensor) || !dims(r, o, p, "dims", t.dims) ||
        !r.integer(o, p, "bytes", t.bytes, 0))
      return false;
    if (!uses.insert(t.contraction + "." + t.operand).second)
      return r.fail(p, "a second transpose of operand " + t.operand + " of \"" + t.contraction +
                           "\"");
    c.transposes.push_back(t);
  }

  names.clear();
  if (!r.array(root, "", "kernels", arr))
    return false;
  for (size_t i = 0; i < arr->size(); ++i) {
    ConfigKernel k;
    if (!parseKernel(r, (*arr)[i], Reader::index("kernels", i), k, names))
      return false;
    c.kernels.push_back(k);
  }

  names.clear();
  if (!r.array(root, "", "contractions", arr))
    return false;
  for (size_t i = 0; i < arr->size(); ++i) {
    ConfigContraction k;
    if (!parseContraction(r, (*arr)[i], Reader::index("contractions", i), k, names))
      return false;
    c.contractions.push_back(k);
  }
  out = std::move(c);
  return true;
}

std::string writeConfig(const Configuration &c) {
  ojson tensors = ojson::array(), transposes = ojson::array(), kernels = ojson::array(),
        contractions = ojson::array();
  for (const ConfigTensor &t : c.tensors)
    tensors.push_back({{"name", t.name}, {"dims", t.dims}});
  for (const ConfigTranspose &t : c.transposes)
    transposes.push_back({{"contraction", t.contraction},
                          {"operand", t.operand},
                          {"tensor", t.tensor},
                          {"dims", t.dims},
                          {"bytes", t.bytes}});
  for (const ConfigKernel &k : c.kernels) {
    ojson entry = {{"name", k.name},       {"lane_dim", k.laneDim}, {"tx", k.tx},
                  {"ty", k.ty},           {"per_thread", k.perThread}, {"vec", k.vec},
                  {"split", k.split},     {"describe", k.describe}};
    if (k.warps > 0) {
      entry["block_m"] = k.blockM;
      entry["block_n"] = k.blockN;
      entry["warps"] = k.warps;
      if (k.wgmma)
        entry["wgmma"] = true;
      if (k.minBlocks > 0)
        entry["min_blocks"] = k.minBlocks;
    }
    if (k.unroll > 0)
      entry["unroll"] = k.unroll;
    kernels.push_back(std::move(entry));
  }
  for (const ConfigContraction &k : c.contractions)
    contractions.push_back({{"name", k.name},
                            {"equation", k.equation},
                            {"swap", k.swap},
                            {"transa", k.transa},
                            {"transb", k.transb},
                            {"batch", k.batch},
                            {"batch_strides", {k.strideA, k.strideB, k.strideD}},
                            {"algorithm", k.algorithm},
                            {"epilogue", k.epilogue}});
  ojson root = {{"format", c.format},
                {"version", c.version},
                {"model", c.model},
                {"tensors", std::move(tensors)},
                {"transposes", std::move(transposes)},
                {"kernels", std::move(kernels)},
                {"contractions", std::move(contractions)}};
  if (c.hasPaths)
    root["paths"] = {{"fused_attention", c.paths.fusedAttention},
                     {"column_fusion", c.paths.columnFusion},
                     {"bias_grads", c.paths.biasGrads},
                     {"gemm_addends", c.paths.gemmAddends},
                     {"stack_in_place", c.paths.stackInPlace}};
  if (c.hasPrediction)
    root["prediction"] = {{"device", c.prediction.device},
                          {"database", c.prediction.database},
                          {"forward_us", c.prediction.forwardUs},
                          {"backward_us", c.prediction.backwardUs}};
  if (c.hasPrediction && !c.prediction.steps.empty()) {
    ojson steps = ojson::object();
    for (const auto &[name, us] : c.prediction.steps)
      steps[name] = us;
    root["prediction"]["steps"] = std::move(steps);
  }
  if (c.hasPrediction && c.prediction.calibrated())
    root["prediction"]["calibration"] = {
        {"default_measured_us", c.prediction.defaultMeasuredUs},
        {"default_predicted_us", c.prediction.defaultPredictedUs}};
  return root.dump(2, ' ', false, decltype(root)::error_handler_t::replace) + "\n";
}

} // namespace dmrt
