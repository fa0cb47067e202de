//===- StepCheck.cpp - Bind a whole step's data and check its results -----===//
#include "runtime/StepCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace dmrt {
namespace {

bool isInputRole(const std::string &r) {
  return r == "input" || r == "param" || r == "grad_output";
}
bool isResultRole(const std::string &r) { return r == "output" || r == "grad"; }

std::string shapeString(const std::vector<int64_t> &s) {
  std::string out = "[";
  for (size_t n = 0; n < s.size(); ++n)
    out += (n ? ", " : "") + std::to_string(s[n]);
  return out + "]";
}

} // namespace

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
    if (!isInputRole(t.role) && !isResultRole(t.role))
      continue;
    byName[t.name] = &t;
    const Tensor *v = eval.find(t.name);
    if (!v) {
      error = evalPath + ": no tensor '" + t.name + "' (bundle tensor " +
              std::to_string(t.id) + ", role " + t.role + ")";
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
    bool input = isInputRole(t.role);
    if (input) {
      std::vector<double> values = toDoubles(*v);
      std::vector<double> stored =
          toDoubles(fromDoubles(t.name, t.dtype, t.shape, values));
      for (size_t e = 0; e < values.size(); ++e)
        if (stored[e] != values[e] && !(std::isnan(stored[e]) && std::isnan(values[e]))) {
          char buf[64];
          std::snprintf(buf, sizeof buf, "%.9g", values[e]);
          error = evalPath + ": input '" + t.name + "' element " + std::to_string(e) +
                  " = " + buf + " is not exactly " + bundleDTypeName(t.dtype) +
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
  TensorCheck c;
  c.name = name;
  c.elements = static_cast<int64_t>(ref.size());
  if (got.size() != ref.size() || (exact && exact->size() != ref.size())) {
    c.sizeMismatch = true;
    return c;
  }
  for (size_t e = 0; e < ref.size(); ++e) {
    if (std::isfinite(ref[e]))
      c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(ref[e]));
    if (exact && std::isfinite(ref[e]) && std::isfinite((*exact)[e]))
      c.noise = std::max(c.noise, std::fabs(ref[e] - (*exact)[e]));
  }
  c.allZero = c.maxAbsRef == 0;
  c.atol = std::max(bound.atolFraction * c.maxAbsRef, bound.noiseFactor * c.noise);
  for (size_t e = 0; e < ref.size(); ++e) {
    double ratio;
    if (!std::isfinite(ref[e])) // must be matched exactly
      ratio = (std::isnan(ref[e]) ? std::isnan(got[e]) : got[e] == ref[e])
                  ? 0
                  : std::numeric_limits<double>::infinity();
    else if (!std::isfinite(got[e]))
      ratio = std::numeric_limits<double>::infinity();
    else {
      double b = bound.rtol * std::fabs(ref[e]) + c.atol;
      double d = std::fabs(got[e] - ref[e]);
      ratio = b > 0 ? d / b : (d == 0 ? 0 : std::numeric_limits<double>::infinity());
    }
    if (ratio > 1)
      ++c.failures;
    if (c.worst < 0 || ratio > c.worstRatio) {
      c.worstRatio = ratio;
      c.worst = static_cast<int64_t>(e);
      c.worstRef = ref[e];
      c.worstGot = got[e];
    }
  }
  c.pass = !c.allZero && c.failures == 0;
  return c;
}

std::string describeCheck(const TensorCheck &c) {
  char buf[512];
  if (c.sizeMismatch)
    std::snprintf(buf, sizeof buf, "%-22s FAIL sizes differ (%lld reference elements)",
                  c.name.c_str(), static_cast<long long>(c.elements));
  else if (c.allZero)
    std::snprintf(buf, sizeof buf, "%-22s FAIL the reference is all zero: nothing to check",
                  c.name.c_str());
  else
    std::snprintf(buf, sizeof buf,
                  "%-22s %s worst %.3g of the bound at [%lld]: ref %.6g got %.6g; "
                  "%lld/%lld over; max|ref| %.3g, noise %.3g, atol %.3g",
                  c.name.c_str(), c.pass ? "ok  " : "FAIL", c.worstRatio,
                  static_cast<long long>(c.worst), c.worstRef, c.worstGot,
                  static_cast<long long>(c.failures), static_cast<long long>(c.elements),
                  c.maxAbsRef, c.noise, c.atol);
  return buf;
}

} // namespace dmrt
