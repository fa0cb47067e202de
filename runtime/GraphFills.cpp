//===- GraphFills.cpp - A captured graph's memset nodes as kernels --------===//
#include "runtime/GraphFills.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace dmrt {
namespace {

/// One fill entry, `{W}` standing for its store width in bits (8, 16, 32):
/// dmrt_fill_b{W}(dst, pitch, count, value) stores the low {W} bits of
/// `value` `count` times from dst + row * pitch (row blockIdx.y), element i
/// at byte i * {W} / 8, in a grid-stride loop over x.
const char kFillEntry[] = R"PTX(
.visible .entry dmrt_fill_b{W}(
	.param .u64 p_dst,
	.param .u64 p_pitch,
	.param .u64 p_count,
	.param .u32 p_value)
{
	.reg .pred 	%p1;
	.reg .b32 	%r<9>;
	.reg .b64 	%rd<10>;
	ld.param.u64 	%rd1, [p_dst];
	ld.param.u64 	%rd2, [p_pitch];
	ld.param.u64 	%rd3, [p_count];
	ld.param.u32 	%r1, [p_value];
	cvta.to.global.u64 	%rd1, %rd1;
	mov.u32 	%r2, %ctaid.y;
	cvt.u64.u32 	%rd4, %r2;
	mad.lo.u64 	%rd1, %rd4, %rd2, %rd1;
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.u32 	%r6, %r3, %r4, %r5;
	cvt.u64.u32 	%rd5, %r6;
	mov.u32 	%r7, %nctaid.x;
	mul.lo.u32 	%r8, %r7, %r4;
	cvt.u64.u32 	%rd6, %r8;
$L_loop{W}:
	setp.ge.u64 	%p1, %rd5, %rd3;
	@%p1 bra 	$L_done{W};
	mul.lo.u64 	%rd7, %rd5, {W};
	shr.u64 	%rd7, %rd7, 3;
	add.u64 	%rd8, %rd1, %rd7;
	st.global.u{W} 	[%rd8], %r1;
	add.u64 	%rd5, %rd5, %rd6;
	bra.uni 	$L_loop{W};
$L_done{W}:
	ret;
}
)PTX";

/// The module: the entry for 8-, 16- and 32-bit stores.
std::string buildFillPtx() {
  std::string ptx = ".version 7.0\n.target sm_52\n.address_size 64\n";
  for (const char *bits : {"8", "16", "32"}) {
    std::string entry = kFillEntry;
    for (size_t at; (at = entry.find("{W}")) != std::string::npos;)
      entry.replace(at, 3, bits);
    ptx += entry;
  }
  return ptx;
}

constexpr const char *kFillNames[3] = {"dmrt_fill_b8", "dmrt_fill_b16", "dmrt_fill_b32"};
constexpr unsigned kThreads = 256, kMaxBlocks = 4096, kMaxRows = 65535;

} // namespace

const char *fillKernelsPtx() {
  static const std::string ptx = buildFillPtx();
  return ptx.c_str();
}

FillPlan planFill(uint64_t dst, uint64_t pitch, uint32_t value, unsigned elementSize,
                  uint64_t width, uint64_t height) {
  FillPlan p;
  if (elementSize != 1 && elementSize != 2 && elementSize != 4) {
    p.why = "an element size other than 1, 2 or 4 bytes";
    return p;
  }
  if (width == 0 || height == 0) {
    p.why = "an empty memset";
    return p;
  }
  if (height > kMaxRows) {
    p.why = "more than 65535 rows";
    return p;
  }
  uint64_t rowBytes = width * elementSize;
  if (height == 1)
    pitch = 0;
  for (int s : {4, 2, 1}) {
    if (s % int(elementSize) || dst % s || pitch % s || rowBytes % s)
      continue;
    uint32_t element = elementSize == 4 ? value : value & ((1u << (8 * elementSize)) - 1);
    uint32_t word = element;
    for (int b = int(elementSize); b < s; b += int(elementSize))
      word |= element << (8 * b);
    p.ok = true;
    p.storeBytes = s;
    p.count = rowBytes / s;
    p.value = word;
    p.pitch = pitch;
    p.block[0] = kThreads;
    p.grid[0] = unsigned(std::min<uint64_t>((p.count + kThreads - 1) / kThreads, kMaxBlocks));
    p.grid[1] = unsigned(height);
    return p;
  }
  p.why = "elements not aligned to their size";
  return p;
}

bool GraphFills::load(CudaDriver &driver, std::string &error) {
  if (module_)
    return true;
  const char *ptx = fillKernelsPtx();
  std::vector<char> image(ptx, ptx + std::strlen(ptx) + 1); // with the NUL
  if (driver.loadModule(image, module_, error) != CUDA_SUCCESS) {
    module_ = nullptr;
    error = "loading the graph fill kernels: " + error;
    return false;
  }
  for (int i = 0; i < 3; ++i)
    if (driver.getFunction(module_, kFillNames[i], fill_[i], error) != CUDA_SUCCESS) {
      unload(driver);
      error = "loading the graph fill kernels: " + error;
      return false;
    }
  return true;
}

void GraphFills::unload(CudaDriver &driver) {
  if (module_)
    driver.unloadModule(module_);
  module_ = nullptr;
  fill_[0] = fill_[1] = fill_[2] = nullptr;
}

bool GraphFills::replaceMemsets(CudaDriver &driver, cudaGraph_t graph, int &replaced,
                                int &kept, std::string &error) const {
  replaced = kept = 0;
  // Each graph call's error names it: "replacing a graph's memset nodes: cudaX: ...".
  auto ok = [&](cudaError_t e, const char *call) {
    return cudaCheck(e, std::string("replacing a graph's memset nodes: ") + call, error);
  };
  size_t n = 0;
  if (!ok(cudaGraphGetNodes(graph, nullptr, &n), "cudaGraphGetNodes"))
    return false;
  std::vector<cudaGraphNode_t> nodes(n);
  if (n && !ok(cudaGraphGetNodes(graph, nodes.data(), &n), "cudaGraphGetNodes"))
    return false;
  for (cudaGraphNode_t node : nodes) {
    cudaGraphNodeType type;
    if (!ok(cudaGraphNodeGetType(node, &type), "cudaGraphNodeGetType"))
      return false;
    if (type != cudaGraphNodeTypeMemset)
      continue;
    cudaMemsetParams m{};
    if (!ok(cudaGraphMemsetNodeGetParams(node, &m), "cudaGraphMemsetNodeGetParams"))
      return false;
    FillPlan plan = planFill(reinterpret_cast<uint64_t>(m.dst), m.pitch, m.value,
                             m.elementSize, m.width, m.height);
    if (!plan.ok || !module_) {
      ++kept;
      continue;
    }
    // Its edges: dependencies and dependents (captured edges are all default
    // ones, so the edge data is not asked for).
    size_t nd = 0, ns = 0;
    if (!ok(cudaGraphNodeGetDependencies(node, nullptr, nullptr, &nd),
            "cudaGraphNodeGetDependencies"))
      return false;
    std::vector<cudaGraphNode_t> deps(nd);
    if (nd && !ok(cudaGraphNodeGetDependencies(node, deps.data(), nullptr, &nd),
                  "cudaGraphNodeGetDependencies"))
      return false;
    if (!ok(cudaGraphNodeGetDependentNodes(node, nullptr, nullptr, &ns),
            "cudaGraphNodeGetDependentNodes"))
      return false;
    std::vector<cudaGraphNode_t> next(ns);
    if (ns && !ok(cudaGraphNodeGetDependentNodes(node, next.data(), nullptr, &ns),
                  "cudaGraphNodeGetDependentNodes"))
      return false;
    void *dst = m.dst;
    uint64_t pitch = plan.pitch, count = plan.count;
    uint32_t value = plan.value;
    void *params[] = {&dst, &pitch, &count, &value};
    CUgraphNode fill = nullptr;
    if (!driver.addGraphKernelNode(reinterpret_cast<CUgraph>(graph),
                                   reinterpret_cast<const CUgraphNode *>(deps.data()), nd,
                                   kernel(plan.storeBytes), plan.grid, plan.block, params,
                                   fill, error)) {
      error = "replacing a graph's memset nodes: " + error;
      return false;
    }
    cudaGraphNode_t from = reinterpret_cast<cudaGraphNode_t>(fill);
    for (cudaGraphNode_t to : next)
      if (!ok(cudaGraphAddDependencies(graph, &from, &to, nullptr, 1), "cudaGraphAddDependencies"))
        return false;
    if (!ok(cudaGraphDestroyNode(node), "cudaGraphDestroyNode"))
      return false;
    ++replaced;
  }
  return true;
}

} // namespace dmrt
