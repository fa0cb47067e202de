//===- GemmMapping.cpp - einsum contraction -> one cublasLtMatmul -----------===//

#include "codegen/gemm/GemmMapping.h"

#include <algorithm>
#include <climits>
#include <map>
#include <sstream>

namespace dmcgen {

using dmrt::Epilogue;
using dmrt::GemmDescriptor;
using dmrt::MatrixLayout;
using dmrt::Transpose;
using dmrt::commaSeparated;
using dmrt::epilogueName;

namespace {

/// One tensor after dropping its size-1 dims; strides of the original layout.
struct Tensor {
  char name;
  std::string given; // the layout as given (for messages)
  std::string dims;  // size > 1 letters, storage order
  std::vector<int64_t> strides;
};

/// A group's flattened index in one tensor.
struct GroupInT {
  std::string order; // letters in this tensor's storage order
  int64_t stride = 0;
  bool empty() const { return order.empty(); }
};

struct Group {
  const char *name = ""; // "batch", "M", "N", "K"
  std::string letters; // set (in first-seen order)
  int64_t extent = 1;
  std::string order; // common flattening order
  std::map<char, GroupInT> in; // per tensor name
};

std::string quoted(const std::string &s) { return "'" + s + "'"; }

bool findGroupIn(const Tensor &t, Group &g, std::string &reason) {
  std::vector<size_t> pos;
  GroupInT gi;
  for (size_t i = 0; i < t.dims.size(); ++i)
    if (g.letters.find(t.dims[i]) != std::string::npos) {
      pos.push_back(i);
      gi.order += t.dims[i];
    }
  if (!pos.empty()) {
    if (pos.back() - pos.front() + 1 != pos.size()) {
      std::string between;
      for (size_t i = pos.front(); i <= pos.back(); ++i)
        if (g.letters.find(t.dims[i]) == std::string::npos)
          between += t.dims[i];
      reason = std::string(g.name) + " dims " + commaSeparated(gi.order) +
               " are interleaved in " + t.name + "'s layout " +
               quoted(t.given) + ": " + commaSeparated(between) + " sits between " +
               "them, so they do not flatten to one index with one stride";
      return false;
    }
    gi.stride = t.strides[pos.back()];
  }
  g.in[t.name] = gi;
  return true;
}

/// op(X) is P x Q with P, Q groups of tensor X; choose N/T and the layout.
bool matrixFor(const Tensor &t, const Group &P, const Group &Q,
               dmrt::Transpose &op, MatrixLayout &l, std::string &reason) {
  const GroupInT &p = P.in.at(t.name), &q = Q.in.at(t.name);
  if (!p.empty() && p.stride == 1) {
    op = Transpose::N;
    l.rows = P.extent;
    l.cols = Q.extent;
    l.ld = q.empty() ? P.extent : q.stride;
  } else if (!q.empty() && q.stride == 1) {
    op = Transpose::T;
    l.rows = Q.extent;
    l.cols = P.extent;
    l.ld = p.empty() ? Q.extent : p.stride;
  } else if (p.empty()) {
    op = Transpose::N;
    l.rows = 1;
    l.cols = Q.extent;
    l.ld = q.empty() ? 1 : q.stride;
  } else if (q.empty()) {
    op = Transpose::T;
    l.rows = 1;
    l.cols = P.extent;
    l.ld = p.stride;
  } else {
    reason = std::string(1, t.name) + "'s innermost dim '" +
             std::string(1, t.dims.back()) + "' (layout " + quoted(t.given) +
             ") is a batch dim, so neither its " + P.name + " dims (" +
             commaSeparated(p.order) + ") nor its " + Q.name + " dims (" +
             commaSeparated(q.order) +
             ") have unit stride; cuBLASLt needs one of a matrix's two "
             "dims contiguous";
    return false;
  }
  if (l.ld < l.rows) {
    reason = std::string(1, t.name) + ": leading dimension " +
             std::to_string(l.ld) + " < rows " + std::to_string(l.rows);
    return false;
  }
  return true;
}

} // namespace

/// bcast: M or N letters mapped as a broadcast batch (stride 0 in the operand
/// that lacks them); empty for the plain mapping.
static bool mapImpl(const Contraction &c, const std::string &bcast,
                    GemmDescriptor &out, std::string &reason) {
  reason.clear();
  auto fail = [&](const std::string &s) {
    reason = s;
    return false;
  };

  // --- Validate the input and collect letter sizes.
  std::map<char, int64_t> size;
  std::string all; // letters in first-seen order
  const TensorLayout *tl[3] = {&c.a, &c.b, &c.d};
  const char names[3] = {'a', 'b', 'd'};
  for (int t = 0; t < 3; ++t) {
    const TensorLayout &L = *tl[t];
    if (L.dims.size() != L.sizes.size())
      return fail(std::string(1, names[t]) + " has " +
                  std::to_string(L.dims.size()) + " dims but " +
                  std::to_string(L.sizes.size()) + " sizes");
    for (size_t i = 0; i < L.dims.size(); ++i) {
      char ch = L.dims[i];
      if (L.dims.find(ch) != i)
        return fail(std::string(1, names[t]) + "'s layout " +
                    quoted(L.dims) + " repeats letter '" + ch +
                    "' (diagonals are not contractions)");
      if (L.sizes[i] < 1)
        return fail(std::string(1, names[t]) + ": dim '" + ch +
                    "' has size " + std::to_string(L.sizes[i]));
      auto it = size.find(ch);
      if (it == size.end()) {
        size[ch] = L.sizes[i];
        all += ch;
      } else if (it->second != L.sizes[i]) {
        return fail("dim '" + std::string(1, ch) + "' has size " +
                    std::to_string(it->second) + " in one tensor but " +
                    std::to_string(L.sizes[i]) + " in " + names[t]);
      }
    }
  }

  // --- Classify letters.
  Group batch, M, N, K;
  batch.name = "batch";
  M.name = "M";
  N.name = "N";
  K.name = "K";
  for (char ch : all) {
    bool inA = c.a.dims.find(ch) != std::string::npos;
    bool inB = c.b.dims.find(ch) != std::string::npos;
    bool inD = c.d.dims.find(ch) != std::string::npos;
    Group *g = nullptr;
    if (inA && inB && inD)
      g = &batch;
    else if (inA && inD && !inB)
      g = &M;
    else if (inB && inD && !inA)
      g = &N;
    else if (inA && inB && !inD)
      g = &K;
    else if (inD)
      return fail("dim '" + std::string(1, ch) +
                  "' appears only in d: a broadcast, which a GEMM cannot "
                  "produce");
    else
      return fail("dim '" + std::string(1, ch) + "' appears only in " +
                  (inA ? "a" : "b") +
                  ": a private reduction; sum it out before the GEMM");
    if (bcast.find(ch) != std::string::npos) {
      if (g != &M && g != &N)
        return fail("internal: broadcast batch letter not in M or N");
      g = &batch;
    }
    if (size[ch] > 1) { // size-1 dims carry no addressing
      g->letters += ch;
      g->extent *= size[ch];
    }
  }

  // --- Tensors without their size-1 dims; row-major strides.
  Tensor T[3];
  for (int t = 0; t < 3; ++t) {
    const TensorLayout &L = *tl[t];
    T[t].name = names[t];
    T[t].given = L.dims;
    int64_t s = 1;
    std::vector<int64_t> st(L.dims.size());
    for (size_t i = L.dims.size(); i-- > 0;) {
      st[i] = s;
      s *= L.sizes[i];
    }
    for (size_t i = 0; i < L.dims.size(); ++i)
      if (L.sizes[i] > 1) {
        T[t].dims += L.dims[i];
        T[t].strides.push_back(st[i]);
      }
  }
  Tensor &A = T[0], &B = T[1], &D = T[2];

  // --- Each group: adjacent in every tensor holding it, same order.
  struct Use {
    Group *g;
    std::vector<Tensor *> ts;
  } uses[4] = {{&batch, {&A, &B, &D}},
               {&M, {&A, &D}},
               {&N, {&B, &D}},
               {&K, {&A, &B}}};
  if (!bcast.empty()) { // the broadcast batch lives in d and one operand
    bool fromM = c.a.dims.find(bcast[0]) != std::string::npos;
    uses[0].ts = {fromM ? &A : &B, &D};
  }
  for (Use &u : uses) {
    for (Tensor *t : u.ts)
      if (!findGroupIn(*t, *u.g, reason))
        return false;
    for (Tensor *t : {&A, &B, &D}) // absent tensors: an empty entry
      if (!u.g->in.count(t->name))
        u.g->in[t->name] = GroupInT();
    const std::string &first = u.g->in[u.ts[0]->name].order;
    for (size_t i = 1; i < u.ts.size(); ++i) {
      const std::string &o = u.g->in[u.ts[i]->name].order;
      if (o != first)
        return fail(std::string(u.g->name) + " dims are ordered " +
                    commaSeparated(first) + " in " + u.ts[0]->name + " (" +
                    quoted(u.ts[0]->given) + ") but " + commaSeparated(o) + " in " +
                    u.ts[i]->name + " (" + quoted(u.ts[i]->given) +
                    "): one flattened index needs the same order in both");
    }
    u.g->order = first;
  }
  if (batch.extent > INT32_MAX)
    return fail("batch count " + std::to_string(batch.extent) +
                " exceeds int32 (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)");

  // --- Epilogue input checks independent of the orientation.
  Epilogue ep = c.epilogue;
  bool usesBias = epilogueReadsBias(ep) || epilogueWritesBias(ep);
  if (!usesBias && !c.biasDims.empty())
    return fail(std::string("biasDims ") + quoted(c.biasDims) +
                " given but epilogue " + epilogueName(ep) + " has no bias");
  if (usesBias && c.biasDims.empty())
    return fail(std::string("epilogue ") + epilogueName(ep) +
                " needs biasDims (the bias vector's letters)");
  std::string biasEff; // bias letters without size-1 dims
  for (size_t i = 0; i < c.biasDims.size(); ++i) {
    char ch = c.biasDims[i];
    if (!size.count(ch))
      return fail("bias dim '" + std::string(1, ch) +
                  "' is not a dim of the contraction");
    if (c.biasDims.find(ch) != i)
      return fail("biasDims " + quoted(c.biasDims) + " repeats '" +
                  std::string(1, ch) + "'");
    if (size[ch] > 1)
      biasEff += ch;
  }

  // --- Orientation: which group is on D's rows.
  const GroupInT &dM = M.in['d'], &dN = N.in['d'];
  bool noSwapOk = dM.empty() || dM.stride == 1;
  bool swapOk = dN.empty() || dN.stride == 1;
  if (!noSwapOk && !swapOk)
    return fail("d's innermost dim '" + std::string(1, D.dims.back()) +
                "' (layout " + quoted(D.given) +
                ") is a batch dim, so D is column-major neither with its M "
                "dims (" + commaSeparated(dM.order) + ") as rows nor, swapped, with "
                "its N dims (" + commaSeparated(dN.order) +
                ") as rows; cuBLASLt applies no op to D (TRANSC must be N)");
  std::vector<bool> tries;
  if (!dM.empty() && dM.stride == 1) {
    tries.push_back(false);
    if (swapOk)
      tries.push_back(true);
  } else if (!dN.empty() && dN.stride == 1) {
    tries.push_back(true);
    if (noSwapOk)
      tries.push_back(false);
  } else {
    if (noSwapOk)
      tries.push_back(false);
    if (swapOk)
      tries.push_back(true);
  }

  std::string firstReason;
  for (bool swap : tries) {
    GemmDescriptor g;
    std::string why;
    Group &R = swap ? N : M, &C = swap ? M : N;
    Tensor &X = swap ? B : A, &Y = swap ? A : B;
    g.swapOperands = swap;
    g.m = R.extent;
    g.n = C.extent;
    g.k = K.extent;
    g.batchCount = (int32_t)batch.extent;
    g.rowDims = R.order;
    g.colDims = C.order;
    g.kDims = K.order;
    g.batchDims = batch.order;
    g.alpha = c.alpha;
    g.beta = c.beta;
    auto attempt = [&]() -> bool {
      // D: rows = R (contiguous or extent 1), cols = C.
      const GroupInT &dr = R.in['d'], &dc = C.in['d'];
      g.d.rows = R.extent;
      g.d.cols = C.extent;
      g.d.ld = dc.empty() ? std::max<int64_t>(1, R.extent) : dc.stride;
      if (!dr.empty() && dr.stride != 1) {
        why = "internal: D rows not contiguous";
        return false;
      }
      if (g.d.ld < g.d.rows) {
        why = "d: leading dimension " + std::to_string(g.d.ld) + " < rows";
        return false;
      }
      if (!matrixFor(X, R, K, g.transA, g.a, why) ||
          !matrixFor(Y, K, C, g.transB, g.b, why))
        return false;
      auto bstride = [&](const Tensor &t) {
        return g.batchCount > 1 ? batch.in[t.name].stride : 0;
      };
      g.a.batchCount = g.b.batchCount = g.d.batchCount = g.batchCount;
      g.a.batchStride = bstride(X);
      g.b.batchStride = bstride(Y);
      g.d.batchStride = bstride(D);
      g.c = g.d;

      // Epilogue.
      g.epilogue = ep;
      if (usesBias) {
        const Group *vec = &R;
        if (ep == Epilogue::BGradA) {
          vec = &M;
          g.epilogue = swap ? Epilogue::BGradB : Epilogue::BGradA;
        } else if (ep == Epilogue::BGradB) {
          vec = &N;
          g.epilogue = swap ? Epilogue::BGradA : Epilogue::BGradB;
        }
        bool grad = epilogueWritesBias(ep);
        std::string what = grad ? "bias gradient" : "bias";
        std::string want = vec->order;
        bool withBatch = false;
        if (!batch.order.empty() && biasEff.size() >= batch.order.size() &&
            biasEff.compare(0, batch.order.size(), batch.order) == 0) {
          withBatch = true;
        }
        std::string vecPart =
            withBatch ? biasEff.substr(batch.order.size()) : biasEff;
        bool anyBatchLetter = false;
        for (char ch : vecPart)
          if (batch.letters.find(ch) != std::string::npos)
            anyBatchLetter = true;
        if (anyBatchLetter) {
          why = "epilogue " + std::string(epilogueName(ep)) + ": " + what +
                " dims " + quoted(c.biasDims) +
                " must hold the batch dims (" + commaSeparated(batch.order) +
                ") as one outer block in that order, or none of them";
          return false;
        }
        if (vecPart != want) {
          if (ep == Epilogue::BGradA || ep == Epilogue::BGradB) {
            why = "epilogue " + std::string(epilogueName(ep)) +
                  " reduces " + (ep == Epilogue::BGradA ? "a" : "b") +
                  " over its K dims (" + commaSeparated(K.order) +
                  "), leaving a vector over " + vec->name + " dims " +
                  quoted(want) + " (in that order), but biasDims are " +
                  quoted(c.biasDims);
          } else if (vecPart == C.order && !C.order.empty()) {
            why = "epilogue " + std::string(epilogueName(ep)) + " needs the " +
                  what + " along the rows of column-major D, but " + what +
                  " dims " + quoted(c.biasDims) + " are D's columns: d's "
                  "layout " + quoted(D.given) + " makes the " + R.name +
                  " dims (" + commaSeparated(R.order) +
                  ") contiguous, so they are the rows; cuBLASLt has no "
                  "column-bias epilogue (that would need a row-major D, which "
                  "its epilogues do not support)";
          } else {
            why = "epilogue " + std::string(epilogueName(ep)) + " needs the " +
                  what + " to be a packed vector along D's rows " +
                  quoted(want) + " (in that order, optionally after the batch "
                  "dims), but biasDims are " + quoted(c.biasDims);
          }
          return false;
        }
        g.biasLength = (g.epilogue == Epilogue::BGradB) ? g.n : g.m;
        g.biasBatchStride = (withBatch && g.batchCount > 1) ? g.biasLength : 0;
        if (grad && g.batchCount > 1 && !withBatch) {
          why = "epilogue " + std::string(epilogueName(ep)) + ": the " + what +
                " over " + quoted(c.biasDims) +
                " would also sum over the batch dims (" + commaSeparated(batch.order) +
                "), but cuBLASLt writes one vector per batch (add the batch "
                "dims to biasDims and reduce them separately)";
          return false;
        }
      }
      if (epilogueWritesAux(ep) || epilogueReadsAux(ep)) {
        int64_t align = epilogueIsRelu(ep) ? 128 : 8;
        g.auxLd = (g.m + align - 1) / align * align;
        g.auxBatchStride = g.batchCount > 1 ? g.auxLd * g.n : 0;
      }
      return validateDescriptor(g, why);
    };
    if (attempt()) {
      out = g;
      return true;
    }
    if (firstReason.empty())
      firstReason = why;
  }
  return fail(firstReason);
}

bool mapContraction(const Contraction &c, GemmDescriptor &out,
                    std::string &reason) {
  if (c.epilogue == Epilogue::Accumulate) {
    // Rule 5, ACCUMULATE: C is the addend, laid out as D.
    if (c.biasDims != c.d.dims) {
      reason = "epilogue ACCUMULATE reads its addend as C, which shares D's layout: the "
               "addend's dims are '" + c.biasDims + "' but D's are '" + c.d.dims + "'";
      return false;
    }
    if (c.beta != 0) {
      reason = "epilogue ACCUMULATE reads its addend as C: beta must be 0, not " +
               std::to_string(c.beta);
      return false;
    }
    Contraction plain = c;
    plain.epilogue = Epilogue::None;
    plain.biasDims.clear();
    if (!mapContraction(plain, out, reason))
      return false;
    out.epilogue = Epilogue::Accumulate;
    return true;
  }
  if (mapImpl(c, "", out, reason))
    return true;
  // Fallback: with no batch dims of its own, a block of M (or N) dims that is
  // adjacent in d may become a strided batch that the other operand
  // broadcasts (its batch stride 0), e.g. s in bji,shpi->sbjhp (stacked QKV
  // written s-major). Only valid input reaches here with a..d all consistent.
  std::string bad = reason;
  for (char ch : c.a.dims)
    if (c.b.dims.find(ch) != std::string::npos &&
        c.d.dims.find(ch) != std::string::npos)
      return false; // true batch dims exist: a second stride is impossible
  auto sizeOf = [&](char ch) {
    size_t i = c.d.dims.find(ch);
    return c.d.sizes[i];
  };
  std::string dd; // d without size-1 dims
  for (char ch : c.d.dims)
    if (sizeOf(ch) > 1)
      dd += ch;
  for (size_t i = 0; i < dd.size(); ++i) {
    bool inA = c.a.dims.find(dd[i]) != std::string::npos;
    bool inB = c.b.dims.find(dd[i]) != std::string::npos;
    if (inA == inB)
      return false; // not M/N: input errors were reported by mapImpl
    // The block must leave its group non-empty: a batch of m = 1 (or n = 1)
    // products is a batched GEMV/outer product, legal but never worth it.
    size_t groupSize = 0;
    for (char ch : dd)
      if ((c.a.dims.find(ch) != std::string::npos) == inA)
        ++groupSize;
    std::string block;
    for (size_t j = i; j < dd.size(); ++j) {
      bool jA = c.a.dims.find(dd[j]) != std::string::npos;
      if (jA != inA || block.size() + 1 >= groupSize)
        break;
      block += dd[j];
      GemmDescriptor g;
      std::string why;
      if (mapImpl(c, block, g, why)) {
        out = g;
        reason.clear();
        return true;
      }
    }
  }
  reason = bad;
  return false;
}

} // namespace dmcgen
