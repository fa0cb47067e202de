//===- PreparedProblem.cpp - validation, indexing, liveness, pruning -----===//
#include "passes/select/PreparedProblem.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dmc::select {
namespace {

using Error = Result<PreparedProblem>;

int findLayout(const Tensor &t, const std::string &layout) {
  auto it = std::find(t.layouts.begin(), t.layouts.end(), layout);
  return it == t.layouts.end() ? -1 : int(it - t.layouts.begin());
}

std::string joined(const std::vector<std::string> &names) {
  std::string s;
  for (const std::string &n : names)
    s += (s.empty() ? "'" : ", '") + n + "'";
  return s;
}

/// Layouts in the order of the cheapest configuration using them (stable on
/// ties), given (cost, layout) pairs already in configuration order.
std::vector<uint8_t> rankLayouts(std::vector<std::pair<double, uint8_t>> uses) {
  std::stable_sort(uses.begin(), uses.end(),
                   [](const auto &a, const auto &b) { return a.first < b.first; });
  std::vector<uint8_t> ranked;
  for (const auto &u : uses)
    if (std::find(ranked.begin(), ranked.end(), u.second) == ranked.end())
      ranked.push_back(u.second);
  return ranked;
}

/// Keeps the k best layouts per tensor and the configurations writing only
/// kept layouts (see prepare()).
void prune(PreparedProblem &p, int k) {
  const ConfigProblem &src = *p.source;
  for (size_t t = 0; t < src.tensors.size(); ++t) {
    bool argument = p.producer[t] < 0;
    if (argument && (p.fixed[t] >= 0 || p.lastRead[t] < 0))
      continue; // one layout, or never stored across a cut
    std::vector<std::pair<double, uint8_t>> uses;
    if (p.producer[t] >= 0) {
      const PreparedOp &op = p.ops[p.producer[t]];
      size_t w = std::find(op.writes.begin(), op.writes.end(), int(t)) - op.writes.begin();
      for (const PreparedConfig &c : op.configs)
        uses.push_back({c.cost, c.writeLayout[w]});
    } else {
      for (size_t i = 0; i < p.ops.size(); ++i) {
        const PreparedOp &op = p.ops[i];
        size_t r = std::find(op.reads.begin(), op.reads.end(), int(t)) - op.reads.begin();
        if (r < op.reads.size())
          for (const PreparedConfig &c : op.configs)
            uses.push_back({c.cost, c.readLayout[r]});
      }
    }
    std::vector<uint8_t> ranked = rankLayouts(std::move(uses));
    if (argument) // layouts no configuration reads directly: last
      for (size_t l = 0; l < src.tensors[t].layouts.size(); ++l)
        if (std::find(ranked.begin(), ranked.end(), uint8_t(l)) == ranked.end())
          ranked.push_back(uint8_t(l));
    if (int(ranked.size()) > k) {
      ranked.resize(k);
      p.pruned = true;
    }
    p.storable[t] = ranked;
  }
  for (PreparedOp &op : p.ops) {
    auto drop = [&](const PreparedConfig &c) {
      for (size_t w = 0; w < op.writes.size(); ++w) {
        const std::vector<uint8_t> &keep = p.storable[op.writes[w]];
        if (std::find(keep.begin(), keep.end(), c.writeLayout[w]) == keep.end())
          return true;
      }
      return false;
    };
    op.configs.erase(std::remove_if(op.configs.begin(), op.configs.end(), drop),
                     op.configs.end());
  }
}

/// Checks one configuration of op `i` and indexes its layouts.
std::string prepareConfig(const PreparedProblem &p, int i, int c, PreparedConfig &out) {
  const ConfigProblem &src = *p.source;
  const Op &op = src.ops[i];
  const Config &cfg = op.configs[c];
  std::string where = "op " + p.opName(i) + " config " + std::to_string(c) + " ('" +
                      cfg.label + "')";
  out.index = c;
  out.cost = cfg.cost;
  out.readLayout.assign(op.reads.size(), 0);
  out.writeLayout.assign(op.writes.size(), 0);
  std::vector<bool> seenRead(op.reads.size()), seenWrite(op.writes.size());
  for (const TensorLayout &tl : cfg.layouts) {
    auto r = std::find(op.reads.begin(), op.reads.end(), tl.tensor);
    auto w = std::find(op.writes.begin(), op.writes.end(), tl.tensor);
    bool isRead = r != op.reads.end();
    if (!isRead && w == op.writes.end())
      return where + ": gives a layout for tensor id " + std::to_string(tl.tensor) +
             ", which the op neither reads nor writes";
    const Tensor &t = src.tensors[tl.tensor];
    int l = findLayout(t, tl.layout);
    if (l < 0)
      return where + ": layout '" + tl.layout + "' is not a candidate of tensor '" +
             t.name + "' (candidates: " + joined(t.layouts) + ")";
    std::vector<bool>::reference seen =
        isRead ? seenRead[r - op.reads.begin()] : seenWrite[w - op.writes.begin()];
    if (seen)
      return where + ": gives two layouts for tensor '" + t.name + "'";
    seen = true;
    (isRead ? out.readLayout[r - op.reads.begin()]
            : out.writeLayout[w - op.writes.begin()]) = uint8_t(l);
  }
  for (size_t r = 0; r < op.reads.size(); ++r)
    if (!seenRead[r])
      return where + ": no layout for tensor '" + p.tensorName(op.reads[r]) +
             "', which it reads";
  for (size_t w = 0; w < op.writes.size(); ++w)
    if (!seenWrite[w])
      return where + ": no layout for tensor '" + p.tensorName(op.writes[w]) +
             "', which it writes";
  if (cfg.available && !(cfg.cost >= 0 && std::isfinite(cfg.cost)))
    return where + ": cost " + std::to_string(cfg.cost) +
           " is not a finite non-negative time (mark it unavailable instead)";
  return "";
}

} // namespace

std::string PreparedProblem::opName(int op) const {
  return "'" + source->ops[op].name + "' (#" + std::to_string(op) + ")";
}

Result<PreparedProblem> prepare(const ConfigProblem &src, int maxLayoutsPerTensor) {
  PreparedProblem p;
  p.source = &src;
  p.maxLayoutsPerTensor = maxLayoutsPerTensor;
  const int numTensors = int(src.tensors.size()), numOps = int(src.ops.size());
  p.producer.assign(numTensors, -1);
  p.lastRead.assign(numTensors, -1);
  p.fixed.assign(numTensors, -1);
  p.storable.resize(numTensors);
  p.transposeTable.resize(numTensors);
  for (int t = 0; t < numTensors; ++t) {
    const Tensor &tensor = src.tensors[t];
    size_t n = tensor.layouts.size();
    if (n == 0 || n > 255)
      return Error::failure("tensor '" + tensor.name + "' has " + std::to_string(n) +
                            " candidate layouts (1 to 255 are supported)");
    for (size_t l = 0; l < n; ++l)
      if (findLayout(tensor, tensor.layouts[l]) != int(l))
        return Error::failure("tensor '" + tensor.name + "' lists layout '" +
                              tensor.layouts[l] + "' twice");
    if (!tensor.fixedLayout.empty()) {
      p.fixed[t] = findLayout(tensor, tensor.fixedLayout);
      if (p.fixed[t] < 0)
        return Error::failure("tensor '" + tensor.name + "': fixed layout '" +
                              tensor.fixedLayout + "' is not among its candidates (" +
                              joined(tensor.layouts) + ")");
    }
    p.storable[t].resize(p.fixed[t] >= 0 && tensor.isArgument ? 1 : n);
    std::iota(p.storable[t].begin(), p.storable[t].end(), uint8_t(0));
    if (p.fixed[t] >= 0 && tensor.isArgument)
      p.storable[t][0] = uint8_t(p.fixed[t]);
    std::vector<double> &table = p.transposeTable[t];
    table.assign(n * n, 0);
    for (size_t a = 0; a < n; ++a)
      for (size_t b = 0; b < n; ++b) {
        if (a == b)
          continue;
        double c = src.transposeCost
                       ? src.transposeCost(t, tensor.layouts[a], tensor.layouts[b])
                       : kForbidden;
        if (!(c >= 0))
          return Error::failure("tensor '" + tensor.name + "': transpose '" +
                                tensor.layouts[a] + "' -> '" + tensor.layouts[b] +
                                "' costs " + std::to_string(c) +
                                " (must be >= 0, or kForbidden)");
        table[a * n + b] = c;
      }
  }
  // Producers first, so that a read before the write can name the writer.
  for (int i = 0; i < numOps; ++i)
    for (int t : src.ops[i].writes) {
      if (t < 0 || t >= numTensors)
        return Error::failure("op " + p.opName(i) + " writes unknown tensor id " +
                              std::to_string(t));
      if (src.tensors[t].isArgument)
        return Error::failure("op " + p.opName(i) + " writes argument '" +
                              src.tensors[t].name + "'");
      if (p.producer[t] >= 0)
        return Error::failure("tensor '" + src.tensors[t].name + "' is written by op " +
                              p.opName(p.producer[t]) + " and op " + p.opName(i));
      p.producer[t] = i;
    }
  p.ops.resize(numOps);
  for (int i = 0; i < numOps; ++i) {
    const Op &op = src.ops[i];
    for (size_t r = 0; r < op.reads.size(); ++r) {
      int t = op.reads[r];
      if (t < 0 || t >= numTensors)
        return Error::failure("op " + p.opName(i) + " reads unknown tensor id " +
                              std::to_string(t));
      if (std::count(op.reads.begin(), op.reads.end(), t) > 1)
        return Error::failure("op " + p.opName(i) + " lists tensor '" +
                              src.tensors[t].name + "' twice in its reads");
      if (!src.tensors[t].isArgument && p.producer[t] < 0)
        return Error::failure("op " + p.opName(i) + " reads tensor '" +
                              src.tensors[t].name +
                              "', which is not an argument and no op writes");
      if (!src.tensors[t].isArgument && p.producer[t] >= i)
        return Error::failure("op " + p.opName(i) + " reads tensor '" +
                              src.tensors[t].name + "' before op " +
                              p.opName(p.producer[t]) +
                              " writes it (the order must be topological)");
      p.lastRead[t] = i;
    }
    if (!op.transposable.empty() && op.transposable.size() != op.reads.size())
      return Error::failure("op " + p.opName(i) + " lists " +
                            std::to_string(op.transposable.size()) +
                            " transposable flags for " + std::to_string(op.reads.size()) +
                            " reads");
    p.ops[i].reads = op.reads;
    p.ops[i].writes = op.writes;
    p.ops[i].transposable =
        op.transposable.empty() ? std::vector<bool>(op.reads.size(), true) : op.transposable;
  }
  // Configurations last, so that their errors never hide a structural one.
  for (int i = 0; i < numOps; ++i) {
    const Op &op = src.ops[i];
    for (int c = 0; c < int(op.configs.size()); ++c) {
      PreparedConfig pc;
      std::string error = prepareConfig(p, i, c, pc);
      if (!error.empty())
        return Error::failure(error);
      if (op.configs[c].available)
        p.ops[i].configs.push_back(std::move(pc));
    }
    if (p.ops[i].configs.empty())
      return Error::failure("op " + p.opName(i) + " has no available configuration (" +
                            std::to_string(op.configs.size()) +
                            " listed, none measured)");
  }
  if (maxLayoutsPerTensor > 0)
    prune(p, maxLayoutsPerTensor);
  p.live.resize(numOps + 1);
  for (int c = 0; c <= numOps; ++c)
    for (int t = 0; t < numTensors; ++t)
      if (p.producer[t] < c && p.lastRead[t] >= c)
        p.live[c].push_back(t);
  return p;
}

} // namespace dmc::select
