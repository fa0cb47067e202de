//===- WarpEmulator.cpp - CUDA threads as fibers, warp collectives as barriers -===//

#include "WarpEmulator.h"

#include <ucontext.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

namespace dmcemu {

namespace {

[[noreturn]] void fail(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::fprintf(stderr, "warp emulator: ");
  std::vfprintf(stderr, fmt, args);
  std::fprintf(stderr, "\n");
  va_end(args);
  std::abort();
}

struct Copy {
  unsigned char *dst;
  const unsigned char *src;
  bool valid;
};

struct Fiber {
  ucontext_t ctx;
  void *stack = nullptr;
  bool done = false;
  std::vector<Copy> open;                 ///< issued, not yet committed
  std::vector<std::vector<Copy>> groups;  ///< committed, oldest first
  bool wgmmaFenced = false; ///< wgmma.fence since the last wait_group
  int wgmmaGroups = 0;      ///< committed wgmma groups not waited for
};

/// A warpgroup's arrivals at its collective in flight.
struct Group {
  int arrived = 0;
  unsigned generation = 0;
};

/// One warp's exchange area: each lane's operands of the collective in flight.
struct Warp {
  int arrived = 0;
  unsigned generation = 0;
  uint32_t word[32][6];
  const unsigned char *address[32];
};

struct Block {
  unsigned index[3], grid[3];
  int threads = 0;
  unsigned char *smem = nullptr;
  size_t smemBytes = 0;
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  std::vector<Group> groups;
  int arrived = 0;
  unsigned generation = 0;
  int current = -1;
  uint64_t progress = 0; ///< barrier arrivals and finished threads
  ucontext_t scheduler;
  const std::function<void(unsigned char *)> *body = nullptr;
};

Block *gBlock = nullptr;
std::vector<std::pair<const unsigned char *, size_t>> gBuffers;
constexpr size_t kStackBytes = 256 * 1024;

Fiber &self() { return gBlock->fibers[gBlock->current]; }
int lane() { return gBlock->current & 31; }
Warp &warp() { return gBlock->warps[gBlock->current / 32]; }
void yield() { swapcontext(&self().ctx, &gBlock->scheduler); }

void fiberMain() {
  (*gBlock->body)(gBlock->smem);
  Fiber &f = self();
  if (!f.open.empty() || !f.groups.empty())
    fail("thread %d exits with cp.async copies in flight", gBlock->current);
  if (f.wgmmaGroups > 0)
    fail("thread %d exits with wgmma groups not waited for", gBlock->current);
  f.done = true;
  ++gBlock->progress;
} // returns to uc_link: the scheduler

/// Waits until all 32 lanes of this thread's warp arrive.
void warpBarrier() {
  Warp &w = warp();
  const unsigned gen = w.generation;
  ++gBlock->progress;
  if (++w.arrived == 32) {
    w.arrived = 0;
    ++w.generation;
    return;
  }
  while (w.generation == gen)
    yield();
}

void checkShared(const void *p, size_t bytes, const char *what) {
  const unsigned char *c = static_cast<const unsigned char *>(p);
  if (c < gBlock->smem || c + bytes > gBlock->smem + gBlock->smemBytes)
    fail("%s: thread %d accesses shared byte %td (+%zu) outside the %zu bytes launched", what,
         gBlock->current, c - gBlock->smem, bytes, gBlock->smemBytes);
  if (reinterpret_cast<uintptr_t>(c) % 16 != 0)
    fail("%s: thread %d: shared address %td is not 16-byte aligned", what, gBlock->current,
         c - gBlock->smem);
}

uint16_t half16(uint32_t v, bool high) { return (uint16_t)(high ? v >> 16 : v & 0xFFFFu); }

uint16_t load16(const unsigned char *p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

} // namespace

void registerBuffer(const void *begin, size_t bytes) {
  gBuffers.push_back({static_cast<const unsigned char *>(begin), bytes});
}
void clearBuffers() { gBuffers.clear(); }

constexpr uint32_t kSharedWindowBase = 0x400;

uint32_t sharedAddress(const void *p) {
  const unsigned char *c = static_cast<const unsigned char *>(p);
  if (c < gBlock->smem || c > gBlock->smem + gBlock->smemBytes)
    fail("sharedAddress: thread %d: %p is not in shared memory", gBlock->current, p);
  return kSharedWindowBase + (uint32_t)(c - gBlock->smem);
}

void *sharedPointer(uint32_t address) {
  if (address < kSharedWindowBase)
    fail("thread %d: shared address %u below the window", gBlock->current, address);
  return gBlock->smem + (address - kSharedWindowBase);
}

int threadIndex() { return gBlock->current; }
int blockIndex(int axis) { return (int)gBlock->index[axis]; }
int gridSize(int axis) { return (int)gBlock->grid[axis]; }

void syncThreads() {
  const unsigned gen = gBlock->generation;
  ++gBlock->progress;
  if (++gBlock->arrived == gBlock->threads) {
    gBlock->arrived = 0;
    ++gBlock->generation;
    return;
  }
  while (gBlock->generation == gen)
    yield();
}

uint32_t shuffleXor(uint32_t v, int laneMask) {
  Warp &w = warp();
  w.word[lane()][0] = v;
  warpBarrier();
  const uint32_t r = w.word[lane() ^ laneMask][0];
  warpBarrier();
  return r;
}

void ldmatrix(uint32_t (&r)[4], const void *rowAddress, bool trans) {
  checkShared(rowAddress, 16, "ldmatrix");
  Warp &w = warp();
  w.address[lane()] = static_cast<const unsigned char *>(rowAddress);
  warpBarrier();
  const int g = lane() >> 2, t = lane() & 3;
  for (int i = 0; i < 4; ++i) {
    uint16_t lo, hi;
    if (!trans) { // row g of matrix i, columns 2t, 2t+1
      lo = load16(w.address[8 * i + g] + 4 * t);
      hi = load16(w.address[8 * i + g] + 4 * t + 2);
    } else { // rows 2t, 2t+1 of matrix i, column g
      lo = load16(w.address[8 * i + 2 * t] + 2 * g);
      hi = load16(w.address[8 * i + 2 * t + 1] + 2 * g);
    }
    r[i] = (uint32_t)lo | ((uint32_t)hi << 16);
  }
  warpBarrier();
}

void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, bool bf16) {
  Warp &w = warp();
  for (int i = 0; i < 4; ++i)
    w.word[lane()][i] = a[i];
  w.word[lane()][4] = b0;
  w.word[lane()][5] = b1;
  warpBarrier();
  auto value = [&](uint16_t h) { return bf16 ? dmrt::bf16ToFloat(h) : dmrt::halfToFloat(h); };
  // A (16x16): element (row, col) in lane (row%8)*4 + (col%8)/2, register
  // (row >= 8) + 2 (col >= 8), half col%2. B (16x8): element (k, n) in lane
  // n*4 + (k%8)/2, register 4 + (k >= 8), half k%2.
  auto A = [&](int row, int col) {
    const uint32_t v = w.word[(row & 7) * 4 + (col & 7) / 2][(row >= 8) + 2 * (col >= 8)];
    return value(half16(v, col & 1));
  };
  auto B = [&](int k, int n) {
    const uint32_t v = w.word[n * 4 + (k & 7) / 2][4 + (k >= 8)];
    return value(half16(v, k & 1));
  };
  const int g = lane() >> 2, t = lane() & 3;
  float out[4];
  for (int e = 0; e < 4; ++e) {
    const int row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
    double s = d[e];
    for (int k = 0; k < 16; ++k)
      s += (double)A(row, k) * (double)B(k, col);
    out[e] = (float)s;
  }
  warpBarrier();
  for (int e = 0; e < 4; ++e)
    d[e] = out[e];
}

namespace {

/// Waits until all 128 threads of this thread's warpgroup arrive: a warp
/// that skips a wgmma its group runs leaves the others waiting (the
/// scheduler then reports the deadlock).
void groupBarrier() {
  if (gBlock->threads % 128 != 0)
    fail("wgmma: a block of %d threads is not whole warpgroups", gBlock->threads);
  Group &g = gBlock->groups[gBlock->current / 128];
  const unsigned gen = g.generation;
  ++gBlock->progress;
  if (++g.arrived == 128) {
    g.arrived = 0;
    ++g.generation;
    return;
  }
  while (g.generation == gen)
    yield();
}

/// The bf16/f16 element at byte `offset` (before the 128-byte swizzle) of a
/// descriptor's matrix: the swizzle XORs address bits 4-6 with bits 7-9.
uint16_t swizzled16(uint32_t address) {
  const uint32_t a = address ^ (((address >> 7) & 7u) << 4);
  const unsigned char *p = static_cast<const unsigned char *>(sharedPointer(a));
  if (p < gBlock->smem || p + 2 > gBlock->smem + gBlock->smemBytes)
    fail("wgmma: thread %d reads shared byte %td outside the %zu bytes launched",
         gBlock->current, p - gBlock->smem, gBlock->smemBytes);
  return load16(p);
}

struct Descriptor {
  uint32_t start, leading, stride;
};

Descriptor decode(uint64_t desc) {
  if ((desc >> 62) != 1)
    fail("wgmma: thread %d: descriptor swizzle mode %u, the emulator knows the 128-byte one (1)",
         gBlock->current, (unsigned)(desc >> 62));
  return {(uint32_t)(desc & 0x3FFFu) << 4, (uint32_t)((desc >> 16) & 0x3FFFu) << 4,
          (uint32_t)((desc >> 32) & 0x3FFFu) << 4};
}

} // namespace

void wgmmaFence() { self().wgmmaFenced = true; }
void wgmmaCommit() { ++self().wgmmaGroups; }
void wgmmaWait(int groups) {
  if (self().wgmmaGroups > groups)
    self().wgmmaGroups = groups;
  self().wgmmaFenced = false;
}

void wgmma(float *d, int atoms, uint64_t descA, const uint32_t *a, uint64_t descB, bool transB,
           bool accumulate, bool bf16) {
  if (!self().wgmmaFenced)
    fail("wgmma: thread %d issues a wgmma without wgmma.fence since its last wait",
         gBlock->current);
  groupBarrier();
  Warp &w = warp();
  if (a)
    for (int i = 0; i < 4; ++i)
      w.word[lane()][i] = a[i];
  warpBarrier();
  auto value = [&](uint16_t h) { return bf16 ? dmrt::bf16ToFloat(h) : dmrt::halfToFloat(h); };
  const int rowBase = 16 * ((gBlock->current / 32) % 4); // this warp's rows of the 64
  const Descriptor da = a ? Descriptor{} : decode(descA), db = decode(descB);
  // K-major: row r, column k at start + (r / 8) stride + (r % 8) 128 + 2 k.
  auto kMajor = [&](const Descriptor &m, int r, int k) {
    return swizzled16(m.start + (uint32_t)(r / 8) * m.stride + (uint32_t)(r % 8) * 128 + 2 * k);
  };
  auto A = [&](int row, int k) {
    if (!a)
      return value(kMajor(da, rowBase + row, k));
    const uint32_t v = w.word[(row & 7) * 4 + (k & 7) / 2][(row >= 8) + 2 * (k >= 8)];
    return value(half16(v, k & 1));
  };
  // N-major: k row, n column at start + (k / 8) stride + (k % 8) 128 + 2 (n % 64)
  // + (n / 64) leading.
  auto B = [&](int k, int n) {
    if (!transB)
      return value(kMajor(db, n, k));
    return value(swizzled16(db.start + (uint32_t)(k / 8) * db.stride + (uint32_t)(k % 8) * 128 +
                            2 * (n % 64) + (uint32_t)(n / 64) * db.leading));
  };
  const int g = lane() >> 2, t = lane() & 3;
  float out[8][4];
  for (int i = 0; i < atoms; ++i)
    for (int e = 0; e < 4; ++e) {
      const int row = g + 8 * (e >> 1), col = 8 * i + 2 * t + (e & 1);
      double sum = accumulate ? d[4 * i + e] : 0.0;
      for (int k = 0; k < 16; ++k)
        sum += (double)A(row, k) * (double)B(k, col);
      out[i][e] = (float)sum;
    }
  warpBarrier();
  for (int i = 0; i < atoms; ++i)
    for (int e = 0; e < 4; ++e)
      d[4 * i + e] = out[i][e];
}

void cpAsync(void *dst, const void *src, bool valid) {
  checkShared(dst, 16, "cp.async");
  const unsigned char *s = static_cast<const unsigned char *>(src);
  if (valid) {
    if (reinterpret_cast<uintptr_t>(s) % 16 != 0)
      fail("cp.async: thread %d: global source %p is not 16-byte aligned", gBlock->current, src);
    bool inside = false;
    for (const auto &[begin, bytes] : gBuffers)
      inside |= s >= begin && s + 16 <= begin + bytes;
    if (!inside)
      fail("cp.async: thread %d reads %p, outside every registered buffer", gBlock->current,
           src);
  }
  self().open.push_back({static_cast<unsigned char *>(dst), s, valid});
}

void cpAsyncCommit() {
  Fiber &f = self();
  f.groups.push_back(std::move(f.open));
  f.open.clear();
}

void cpAsyncWait(int groups) {
  Fiber &f = self();
  while ((int)f.groups.size() > groups) {
    for (const Copy &c : f.groups.front()) {
      if (c.valid)
        std::memcpy(c.dst, c.src, 16);
      else
        std::memset(c.dst, 0, 16);
    }
    f.groups.erase(f.groups.begin());
  }
}

namespace {

/// Runs one block to completion (a function of its own: getcontext must not
/// share a frame with the caller's loop counters).
void runBlock(const unsigned index[3], const unsigned grid[3], unsigned threads,
              unsigned char *smem, unsigned sharedBytes,
              const std::function<void(unsigned char *)> &body) {
  Block block;
  for (int i = 0; i < 3; ++i) {
    block.index[i] = index[i];
    block.grid[i] = grid[i];
  }
  block.threads = (int)threads;
  block.smem = smem;
  block.smemBytes = sharedBytes;
  std::memset(smem, 0xFF, sharedBytes); // NaN in bf16 and f16
  block.fibers.resize(threads);
  block.warps.resize(threads / 32);
  block.groups.resize((threads + 127) / 128);
  block.body = &body;
  gBlock = &block;
  for (Fiber &f : block.fibers) {
    f.stack = std::malloc(kStackBytes);
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack;
    f.ctx.uc_stack.ss_size = kStackBytes;
    f.ctx.uc_link = &block.scheduler;
    makecontext(&f.ctx, fiberMain, 0);
  }
  int live = (int)threads;
  while (live > 0) {
    const uint64_t before = block.progress;
    for (int i = 0; i < (int)threads; ++i) {
      if (block.fibers[i].done)
        continue;
      block.current = i;
      swapcontext(&block.scheduler, &block.fibers[i].ctx);
      if (block.fibers[i].done)
        --live;
    }
    if (live > 0 && block.progress == before)
      fail("block (%u, %u, %u): every live thread waits at a barrier no one else reaches "
           "(deadlock)", index[0], index[1], index[2]);
  }
  for (Fiber &f : block.fibers)
    std::free(f.stack);
  gBlock = nullptr;
}

} // namespace

void launch(const unsigned grid[3], unsigned threads, unsigned sharedBytes,
            const std::function<void(unsigned char *)> &body) {
  if (threads == 0 || threads % 32 != 0)
    fail("launch: %u threads is not a positive multiple of 32", threads);
  std::vector<unsigned char> storage(sharedBytes + 128);
  unsigned char *smem = storage.data() + (128 - reinterpret_cast<uintptr_t>(storage.data()) % 128);
  for (unsigned z = 0; z < grid[2]; ++z)
    for (unsigned y = 0; y < grid[1]; ++y)
      for (unsigned x = 0; x < grid[0]; ++x) {
        const unsigned index[3] = {x, y, z};
        runBlock(index, grid, threads, smem, sharedBytes, body);
      }
}

} // namespace dmcemu
