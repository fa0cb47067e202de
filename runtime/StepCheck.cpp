//===- StepCheck.cpp - Bind a whole step's data and check its results -----===//
#include "runtime/StepCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace dmrt {

bool bindEvalFile(const Bundle &b, const TensorFile &eval, const std::string &evalPath,
                  std::vector<StepBinding> &out, std::string &error) {
  out.clear();
  auto precision = eval.metadata.find("precision");
  if (precision == eval.metadata.end() || precision->second != "storage") {
    error = evalPath + ": metadata precision is \"" +
            (precision == eval.metadata.end() ? std::string("(none)") : precision->second) +
            "\", expected \"storage\" (write it with dmc eval --precision storage "
            "--stage fuse --train)";
    return false;
  }
  std::map<std::string, const BundleTensor *> byName;
  for (const BundleTensor &t : b.tensors) {
    if (!isArgumentRole(t.role) && !isResultRole(t.role))
      continue;
    byName[t.name] = &t;
    const Tensor *v = eval.find(t.name);
    if (!v) {
      error = evalPath + ": no tensor '" + t.name + "' (bundle tensor " +
              std::to_string(t.id) + ", role " + tensorRoleName(t.role) + ")";
      return false;
    }
    auto dims = eval.metadata.find("dims." + t.name);
    if (dims != eval.metadata.end() && dims->second != t.dims) {
      error = evalPath + ": tensor '" + t.name + "' has dims '" + dims->second +
              "' but the bundle stores it as '" + t.dims + "'";
      return false;
    }
    if (v->shape != t.shape) {
      error = evalPath + ": tensor '" + t.name + "' has shape " + shapeString(v->shape) +
              " but the bundle's is " + shapeString(t.shape);
      return false;
    }
    bool input = isArgumentRole(t.role);
    if (input) {
      std::vector<double> values = toDoubles(*v);
      std::vector<double> stored =
          toDoubles(fromDoubles(t.name, t.dtype, t.shape, values));
      for (size_t e = 0; e < values.size(); ++e)
        if (stored[e] != values[e] && !(std::isnan(stored[e]) && std::isnan(values[e]))) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.9g", values[e]);
          error = evalPath + ": input '" + t.name + "' element " + std::to_string(e) +
                  " = " + buf + " is not exactly " + dtypeName(t.dtype) +
                  " (was the file written with --precision storage?)";
          return false;
        }
    }
    out.push_back({t.id, v, input});
  }
  for (const Tensor &v : eval.tensors)
    if (!byName.count(v.name)) {
      error = evalPath + ": tensor '" + v.name +
              "' is not an input, parameter, output or gradient of the bundle (" + b.dir +
              ")";
      return false;
    }
  return true;
}

TensorCheck checkTensor(const std::string &name, const std::vector<double> &ref,
                        const std::vector<double> &got, const std::vector<double> *exact,
                        const TensorBound &bound) {
  double maxAbsRef = 0, noise = 0;
  for (size_t e = 0; e < ref.size(); ++e) {
    if (std::isfinite(ref[e]))
      maxAbsRef = std::max(maxAbsRef, std::fabs(ref[e]));
    if (exact && e < exact->size() && std::isfinite(ref[e]) && std::isfinite((*exact)[e]))
      noise = std::max(noise, std::fabs(ref[e] - (*exact)[e]));
  }
  double atol = std::max(bound.atolFraction * maxAbsRef, bound.noiseFactor * noise);
  TensorCheck c;
  static_cast<Comparison &>(c) = compareWithBound(ref, got, bound.rtol, atol);
  c.name = name;
  c.noise = noise;
  if (exact && exact->size() != ref.size()) {
    c.sizeMismatch = true;
    c.pass = false;
  }
  return c;
}

std::string describeCheck(const TensorCheck &c) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-22s %s ", c.name.c_str(), c.pass ? "ok  " : "FAIL");
  return buf + describeComparison(c) +
         (c.noise > 0 ? "; fp64 noise " + std::to_string(c.noise) : std::string());
}

} // namespace dmrt
