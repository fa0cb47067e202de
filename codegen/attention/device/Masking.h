//===- Masking.h - Causal / key-padding masks and dropout on fragments -*- CUDA -*-===//
//
// Score fragments are 16 x 8*NA f32 accumulators of one warp (Mma.h layout:
// element e of atom a sits at row g + 8*(e/2), column 8a + 2t + e%2). Two
// orientations:
//   query-major (Forward, GradQ): rows are queries, columns keys (S = Q K^T);
//   key-major (GradKV): rows are keys, columns queries (S^T = K Q^T).
//
// Dropout follows runtime/format/device/Philox.h: the element (b, h, j, k)
// has logical index n = b*sb + h*sh + j*sj + k*sk and is kept iff its
// 16-bit draw dmrt::dropoutWord(seed, id, n) >= threshold. When consecutive keys
// have consecutive indices (sk == 1: Cfg::kDropoutKeyRuns), lanes split the
// Philox groups (8 elements each) of each run of keys, whatever its
// alignment, and exchange keep bits by shuffles (about one Philox call per 8
// elements); otherwise each element draws its own group.
//
// Saved keep bits (Cfg::kKeepBits): the forward writes each element's keep
// bit AND its visibility (not masked) as int32 words, bit i of word w of row
// (b, h, j) for key 32w + i (Store.h storeRowKeepWords); the backward kernels
// read them (SavedKeepQueryMajor, SavedKeepKeyMajor) instead of drawing.
//
//===----------------------------------------------------------------------===//
#ifndef DMC_ATTENTION_DEVICE_MASKING_H
#define DMC_ATTENTION_DEVICE_MASKING_H

#include "codegen/attention/device/Mma.h"
#include "runtime/format/device/Philox.h"

namespace dmcattn {

DMC_ATTN_DEV float negInf() { return dmrt::bitsToFloat(0xFF800000u); }
DMC_ATTN_DEV float posInf() { return dmrt::bitsToFloat(0x7F800000u); }

/// One keep bit per fragment element. Query-major (Forward, GradQ): element
/// (a, e) at bit 4a + e. KeyMajor (GradKV) with whole chunks of 4 atoms: in
/// the order transposeKeyColumns leaves them, chunk a / 4 at bits 16 (a / 4)
/// on, within it bit 2 (a % 4) + (e & 1) + 8 (e >> 1) (column j = 2 (a % 4) +
/// (e & 1) of the chunk, key row e >> 1); otherwise 4a + e as well.
template <int NA, bool KeyMajor = false> struct KeepBits {
  static constexpr bool kChunked = KeyMajor && NA % 4 == 0;
  uint32_t w[(NA * 4 + 31) / 32];
  DMC_ATTN_DEV static constexpr int pos(int a, int e) {
    return kChunked ? 16 * (a >> 2) + 2 * (a & 3) + (e & 1) + 8 * (e >> 1) : 4 * a + e;
  }
  DMC_ATTN_DEV bool keep(int a, int e) const {
    return (w[pos(a, e) >> 5] >> (pos(a, e) & 31)) & 1u;
  }
  DMC_ATTN_DEV void clear() {
    DMC_ATTN_UNROLL
    for (int i = 0; i < (NA * 4 + 31) / 32; ++i)
      w[i] = 0;
  }
  DMC_ATTN_DEV void set(int a, int e, bool k) {
    w[pos(a, e) >> 5] |= (k ? 1u : 0u) << (pos(a, e) & 31);
  }
  /// Query-major rows in a few word operations instead of a bit at a time:
  /// `x` holds, at bits 8j + c (j < 4, c < 2), the keep bits of elements
  /// (4i + j, 2hf + c): a row's keys 32i + 8j + 2t + c shifted down by 2t.
  DMC_ATTN_DEV void setRowWord(int i, int hf, uint32_t x) {
    static_assert(!KeyMajor, "setRowWord: query-major fragments only");
    x &= 0x03030303u;                        // bits 8j + c
    x = (x | (x >> 4)) & 0x00330033u;        // 8j + c -> 4j + c within each half
    x = (x | (x >> 8)) & 0x0000FFFFu;        // ... and across: 4j + c
    w[(16 * i) >> 5] |= (x << (2 * hf)) << ((16 * i) & 31); // bit 4(4i + j) + 2hf + c
  }
  /// Chunk `c` (atoms 4c .. 4c + 3) from transposeKeyColumns' 16 bits.
  DMC_ATTN_DEV void setChunk(int c, uint32_t bits16) {
    static_assert(kChunked, "setChunk: key-major fragments of whole 4-atom chunks");
    w[(16 * c) >> 5] |= bits16 << ((16 * c) & 31);
  }
};

/// The 8 x 8 bit transposes that hand a key-major fragment its keep bits.
/// The 8 lanes 4j + t (j < 8) each hold in `v` the keep bits of one query
/// column j of a chunk (bit r: key row r < 16 of the fragment); lane 4g + t
/// gets back, at bit j and bit 8 + j, rows g and g + 8 of every column j. The
/// low and high bytes are two 8 x 8 bit matrices transposed together by three
/// butterfly exchanges (lanes 4d apart swap the halves of their d-blocks):
/// 3 shuffles and about 12 integer operations, where extracting each bit after
/// its own shuffle took 8 shuffles and about 60.
DMC_ATTN_DEV uint32_t transposeKeyColumns(uint32_t v) {
  const int g = laneId() >> 2;
  v &= 0xFFFFu;
  DMC_ATTN_UNROLL
  for (int d = 1; d < 8; d <<= 1) {
    // Slots s with s & d == 0 (both bytes); a lane whose j & d == 0 keeps
    // them and takes its partner's same slots, moved up by d; the other keeps
    // the rest and takes its partner's, moved down by d.
    const uint32_t low = d == 1 ? 0x5555u : d == 2 ? 0x3333u : 0x0F0Fu;
    const bool lower = (g & d) == 0;
    const uint32_t kept = lower ? low : low << d;
    const uint32_t send = lower ? (v >> d) & low : (v << d) & (low << d);
    v = (v & kept) | shflXor(send, 4 * d);
  }
  return v;
}

/// transposeKeyColumns for chunks of CH < 4 atoms (2 CH columns, lanes 4j + t with
/// j < 2 CH): lane g takes bits g and g + 8 of column j's `mine` from lane 4j + t
/// by its own shuffle, a bit at a time, into atoms a0 .. a0 + CH - 1.
template <int CH, int NA>
DMC_ATTN_DEV void setKeyColumnsBitwise(KeepBits<NA, true> &bits, int a0, uint32_t mine) {
  const int g = laneId() >> 2;
  DMC_ATTN_UNROLL
  for (int jj = 0; jj < 2 * CH; ++jj) {
    const uint32_t m = shflXor(mine, 4 * (g ^ jj));
    const int a = a0 + (jj >> 1), c = jj & 1;
    bits.set(a, c, (m >> g) & 1u);
    bits.set(a, 2 + c, (m >> (g + 8)) & 1u);
  }
}

/// The raw score of a masked element: whatever scales to -inf (the scale is
/// nonzero, AttentionProblem validate, but may be negative).
template <class Cfg> DMC_ATTN_DEV float maskedScore() {
  return Cfg::kScaleLog2 > 0.f ? negInf() : posInf();
}

/// Whether any score can be masked: never without a causal or key-padding
/// mask when the key tiles (kBlockN keys: the forward's and grad-q's
/// columns, grad-kv's rows) cover Lk exactly. Then maskScores is no code at
/// all; the kernels' runtime tests for a partial tile cannot be proven false
/// (bert-large's wgmma grad-kv spent one FSEL a score on them). A constant
/// in generated kernels, a value the emulator sets at run time.
template <class Cfg> DMC_ATTN_DEV bool keysMayBeMasked() {
  return Cfg::kCausal || Cfg::kKeyPadding || Cfg::kLk % Cfg::kBlockN != 0;
}

/// maskedScore where masked; other scores stay as the product gave them (the
/// kernels fold the scale into the exponent, exp2(fma(s, scale log2 e, -m)),
/// one instruction for two). Row 0 of the fragment is position `row0`,
/// column 0 is `col0`: rows are queries and columns keys (query-major:
/// Forward, GradQ) or, with KeyMajor, the other way round (GradKV). Keys >=
/// kLimit (Lk or lens[b]) and, when causal, keys > query are masked.
template <class Cfg, bool KeyMajor, int NA>
DMC_ATTN_DEV void maskScores(float (&s)[NA][4], int row0, int col0, int kLimit, bool needMask) {
  // The test inside the loop, not one early return: ptxas allocates the
  // latter worse (causal wgmma grad-kv: 176 registers against 164, which
  // costs it a block an SM).
  if (!keysMayBeMasked<Cfg>())
    return;
  const int g = laneId() >> 2, t = laneId() & 3;
  DMC_ATTN_UNROLL
  for (int a = 0; a < NA; ++a)
    DMC_ATTN_UNROLL
    for (int e = 0; e < 4; ++e)
      if (needMask) {
        const int row = row0 + g + 8 * (e >> 1), col = col0 + 8 * a + 2 * t + (e & 1);
        const int key = KeyMajor ? row : col, query = KeyMajor ? col : row;
        if (key >= kLimit || (Cfg::kCausal && key > query))
          s[a][e] = maskedScore<Cfg>();
      }
}

/// 2^(s scale log2(e) - m): a softmax numerator from a raw (masked) score
/// and a row offset m in log2 units (the running max, or the saved lse).
template <class Cfg> DMC_ATTN_DEV float scaledExp2(float s, float m) {
  return fastExp2(fmaf(s, Cfg::kScaleLog2, -m));
}

template <class Cfg> DMC_ATTN_DEV bool keepWord(uint32_t draw) {
  return draw >= Cfg::kDropThreshold;
}

/// 8 keep bits, one per element of a Philox group, bit i for element i.
template <class Cfg> DMC_ATTN_DEV uint32_t keepByte(const uint32_t (&w)[4]) {
  uint32_t bits = 0;
  DMC_ATTN_UNROLL
  for (int i = 0; i < 4; ++i)
    bits |= (keepWord<Cfg>(w[i] & 0xFFFFu) ? 1u : 0u) << (2 * i) |
            (keepWord<Cfg>(w[i] >> 16) ? 2u : 0u) << (2 * i);
  return bits;
}

/// Bits [s, s + 32) of the 64-bit word hi:lo (a funnel shift), s in [0, 32).
DMC_ATTN_DEV uint32_t bitsFrom(uint32_t lo, uint32_t hi, int s) {
  return (uint32_t)((((uint64_t)hi << 32) | lo) >> s);
}

/// Keep bits of a query-major fragment: row 0 is query `query0`, column 0 key
/// `key0`, of head (b, h).
///
/// With Cfg::kDropoutKeyRuns (sk == 1) the W = 8*NA keys of a row are W
/// consecutive indices n0 .. n0 + W - 1, which touch the NA Philox groups
/// from n0 / 8 on, plus one more when n0 is not a multiple of 8 (any sj, e.g.
/// vit's L = 197). The 4 lanes of a quad share rows g and g + 8: lane t draws
/// groups t, t + 4, ... of both rows (the extra group: lane 0 for row g, lane
/// 1 for row g + 8), so a lane runs about NA/2 + 1 Philox calls instead of
/// 4*NA. The quad ORs its bytes into one bit mask per row (bit p = index
/// 8*(n0/8) + p) and each lane reads its keys' bits from it. Otherwise every
/// element draws its own group.
/// The keep words of a query-major fragment's two rows (g and g + 8), 32
/// keys each from the tile's first key: what the forward saves, read off the
/// quad's row masks in dropoutQueryMajor (same in all 4 lanes of a quad).
template <int NA> struct RowKeepWords {
  static constexpr int kWords = NA / 4 > 0 ? NA / 4 : 1;
  uint32_t w[2][kWords];
};

/// With Words (and key runs), also the fragment rows' keep words into *rows.
template <class Cfg, int NA, bool Words = false>
DMC_ATTN_DEV void dropoutQueryMajor(KeepBits<NA> &bits, uint64_t seed, int b, int h, int query0,
                                    int key0, RowKeepWords<NA> *rows = nullptr) {
  const int g = laneId() >> 2, t = laneId() & 3;
  const int64_t head = (int64_t)b * Cfg::kDropB + (int64_t)h * Cfg::kDropH;
  bits.clear();
  if constexpr (Cfg::kDropoutKeyRuns) {
    static_assert(NA % 2 == 0, "query-major dropout: an even number of 8-key atoms");
    constexpr int W = 8 * NA, NM = (W + 7 + 31) / 32; // mask words per row
    int64_t n0[2];
    uint32_t mask[2][NM + 1];
    DMC_ATTN_UNROLL
    for (int half = 0; half < 2; ++half) {
      n0[half] = head + (int64_t)(query0 + g + 8 * half) * Cfg::kDropJ + key0;
      DMC_ATTN_UNROLL
      for (int i = 0; i <= NM; ++i)
        mask[half][i] = 0;
      DMC_ATTN_UNROLL
      for (int i = 0; i < (NA + 3) / 4; ++i) { // group 4i + t: bits 32i + 8t
        if (4 * i + t >= NA)
          continue;
        uint32_t w[4];
        dmrt::dropoutWords(seed, Cfg::kDropoutId, ((uint64_t)n0[half] >> 3) + 4 * i + t, w);
        mask[half][i] |= keepByte<Cfg>(w) << (8 * t);
      }
    }
    // Group NA (bits W .. W + 7) of an unaligned row.
    const int half = t & 1;
    const int64_t nx = half ? n0[1] : n0[0];
    if (t < 2 && (nx & 7) != 0) {
      uint32_t w[4];
      dmrt::dropoutWords(seed, Cfg::kDropoutId, ((uint64_t)nx >> 3) + NA, w);
      const uint32_t byte = keepByte<Cfg>(w) << (W & 31);
      if (half)
        mask[1][W >> 5] |= byte;
      else
        mask[0][W >> 5] |= byte;
    }
    DMC_ATTN_UNROLL
    for (int hf = 0; hf < 2; ++hf) {
      DMC_ATTN_UNROLL
      for (int i = 0; i < NM; ++i) {
        mask[hf][i] |= shflXor(mask[hf][i], 1);
        mask[hf][i] |= shflXor(mask[hf][i], 2);
      }
      // Key 8a + 2t + c of this row is bit (n0 & 7) + 8a + 2t + c; key 32i
      // starts word i of the row.
      if constexpr (Words) {
        static_assert(NA % 4 == 0, "saved keep words: key tiles of whole words");
        DMC_ATTN_UNROLL
        for (int i = 0; i < NA / 4; ++i)
          rows->w[hf][i] = bitsFrom(mask[hf][i], mask[hf][i + 1], (int)(n0[hf] & 7));
      }
      const int s = (int)(n0[hf] & 7) + 2 * t;
      if constexpr (NA % 4 == 0) {
        DMC_ATTN_UNROLL
        for (int i = 0; i < NA / 4; ++i)
          bits.setRowWord(i, hf, bitsFrom(mask[hf][i], mask[hf][i + 1], s));
      } else {
        DMC_ATTN_UNROLL
        for (int a = 0; a < NA; ++a) {
          const uint32_t m = bitsFrom(mask[hf][(8 * a) >> 5], mask[hf][((8 * a) >> 5) + 1], s);
          const int at = (8 * a) & 31;
          bits.set(a, 2 * hf, (m >> at) & 1u);
          bits.set(a, 2 * hf + 1, (m >> (at + 1)) & 1u);
        }
      }
    }
  } else {
    const int64_t rowG = head + (int64_t)(query0 + g) * Cfg::kDropJ;
    const int64_t rowG8 = rowG + 8 * Cfg::kDropJ;
    DMC_ATTN_UNROLL
    for (int a = 0; a < NA; ++a)
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int64_t key = key0 + 8 * a + 2 * t + (e & 1);
        bits.set(a, e,
                 keepWord<Cfg>(dmrt::dropoutWord(seed, Cfg::kDropoutId,
                                           (uint64_t)((e < 2 ? rowG : rowG8) +
                                                      key * Cfg::kDropK))));
      }
  }
}

/// Keep bits of a key-major fragment: row 0 is key `key0`, column 0 query
/// `query0`, of head (b, h).
///
/// With Cfg::kDropoutKeyRuns the 16 keys of a column are 16 consecutive
/// indices from n0 = head + query*sj + key0: 2 Philox groups, 3 when n0 is
/// not a multiple of 8. The 8 lanes with the same t hold columns 2t, 2t + 1
/// of every atom; for a chunk of up to 4 atoms (8 columns) lane g draws the
/// groups of column g, and lane g gets bits g and g + 8 of every column's
/// 16-bit mask by transposeKeyColumns (chunks of 2 atoms: one shuffle per
/// column): at most 0.75 Philox calls per atom instead of 4. Otherwise every
/// element draws its own group.
template <class Cfg, int NA>
DMC_ATTN_DEV void dropoutKeyMajor(KeepBits<NA, true> &bits, uint64_t seed, int b, int h, int key0,
                                  int query0) {
  const int lane = laneId(), g = lane >> 2, t = lane & 3;
  const int64_t head = (int64_t)b * Cfg::kDropB + (int64_t)h * Cfg::kDropH;
  bits.clear();
  if constexpr (Cfg::kDropoutKeyRuns) {
    constexpr int CH = NA < 4 ? NA : 4; // atoms per chunk: 2*CH columns
    static_assert(NA % CH == 0, "key-major dropout: whole chunks of atoms");
    DMC_ATTN_UNROLL
    for (int a0 = 0; a0 < NA; a0 += CH) {
      // Column j = g % (2*CH) of the chunk: atom a0 + j/2, parity j%2.
      const int j = g % (2 * CH);
      const int64_t col = query0 + 8 * (a0 + (j >> 1)) + 2 * t + (j & 1);
      const int64_t n0 = head + col * Cfg::kDropJ + key0;
      const uint64_t g0 = (uint64_t)n0 >> 3;
      const int off = (int)(n0 & 7);
      uint32_t lo = 0; // bit 8q + i: element i of the column's group q
      DMC_ATTN_UNROLL
      for (int q = 0; q < 2; ++q) {
        uint32_t w[4];
        dmrt::dropoutWords(seed, Cfg::kDropoutId, g0 + q, w);
        lo |= keepByte<Cfg>(w) << (8 * q);
      }
      if (off != 0) {
        uint32_t w[4];
        dmrt::dropoutWords(seed, Cfg::kDropoutId, g0 + 2, w);
        lo |= keepByte<Cfg>(w) << 16;
      }
      const uint32_t mine = lo >> off; // bit r: key key0 + r of column j
      if constexpr (CH == 4)
        bits.setChunk(a0 / 4, transposeKeyColumns(mine));
      else
        setKeyColumnsBitwise<CH>(bits, a0, mine);
    }
  } else {
    DMC_ATTN_UNROLL
    for (int a = 0; a < NA; ++a) {
      const int64_t col = query0 + 8 * a + 2 * t;
      DMC_ATTN_UNROLL
      for (int e = 0; e < 4; ++e) {
        const int64_t key = key0 + g + 8 * (e >> 1);
        bits.set(a, e,
                 keepWord<Cfg>(dmrt::dropoutWord(
                     seed, Cfg::kDropoutId,
                     (uint64_t)(head + key * Cfg::kDropK + (col + (e & 1)) * Cfg::kDropJ))));
      }
    }
  }
}

/// The keep words of a query-major fragment's rows (RowKeepWords) packed
/// from its keep bits, for dropout orders without key runs: each lane places
/// its keys 8a + 2t + c of a word, the quad ORs them (two shuffles).
template <int NA> DMC_ATTN_DEV void packRowKeepWords(const KeepBits<NA> &keep,
                                                     RowKeepWords<NA> &rows) {
  static_assert(NA % 4 == 0, "keep-bit words: the key tile is a multiple of 32");
  const int t = laneId() & 3;
  DMC_ATTN_UNROLL
  for (int hf = 0; hf < 2; ++hf)
    DMC_ATTN_UNROLL
    for (int i = 0; i < NA / 4; ++i) {
      uint32_t w = 0; // this lane's keys 8 a4 + 2t + c, placed as if t = 0
      DMC_ATTN_UNROLL
      for (int a4 = 0; a4 < 4; ++a4)
        DMC_ATTN_UNROLL
        for (int c = 0; c < 2; ++c)
          w |= (keep.keep(4 * i + a4, 2 * hf + c) ? 1u : 0u) << (8 * a4 + c);
      w <<= 2 * t;
      w |= shflXor(w, 1);
      w |= shflXor(w, 2);
      rows.w[hf][i] = w;
    }
}

/// Word `w` of saved keep-bit row (b, h, j), 0 for rows >= Lq and words past
/// the row (never read out of bounds).
template <class Cfg>
DMC_ATTN_DEV uint32_t savedKeepWord(const uint32_t *words, int b, int h, int j, int w) {
  if (j >= Cfg::kLq || w >= Cfg::kBitsWords)
    return 0u;
  return words[(int64_t)b * Cfg::kBitsB + (int64_t)h * Cfg::kBitsH + (int64_t)j * Cfg::kBitsJ +
               (int64_t)w * Cfg::kBitsW];
}

/// dropoutQueryMajor's keep bits (AND visibility) from the saved words:
/// rows are queries query0 + g, + 8, columns keys from key0, a multiple of
/// 8*NA (the key tile). `load` fetches the words rows g, g + 8 span (one per
/// 32 keys; the quad's lanes load the same words), `expand` picks the lane's
/// keys' bits; a kernel loads a tile ahead so the loads' latency hides behind
/// a tile of work.
template <class Cfg, int NA> struct SavedKeepQueryMajor {
  // A tile of 32-key multiples starts on a word; otherwise on a 16-key half.
  static constexpr bool Aligned = NA % 4 == 0;
  static constexpr int NW = Aligned ? NA / 4 : (8 * NA + 16 + 31) / 32; // words a row spans
  uint32_t m[2][NW];

  DMC_ATTN_DEV void load(const uint32_t *words, int b, int h, int query0, int key0) {
    const int g = laneId() >> 2, w0 = key0 >> 5;
    DMC_ATTN_UNROLL
    for (int hf = 0; hf < 2; ++hf)
      DMC_ATTN_UNROLL
      for (int i = 0; i < NW; ++i)
        m[hf][i] = savedKeepWord<Cfg>(words, b, h, query0 + g + 8 * hf, w0 + i);
  }
  DMC_ATTN_DEV void expand(KeepBits<NA> &bits, int key0) const {
    const int t = laneId() & 3, o = Aligned ? 0 : key0 & 31;
    bits.clear();
    if constexpr (Aligned) {
      DMC_ATTN_UNROLL
      for (int hf = 0; hf < 2; ++hf)
        DMC_ATTN_UNROLL
        for (int i = 0; i < NW; ++i)
          bits.setRowWord(i, hf, m[hf][i] >> (2 * t));
    } else {
      DMC_ATTN_UNROLL
      for (int hf = 0; hf < 2; ++hf)
        DMC_ATTN_UNROLL
        for (int a = 0; a < NA; ++a) {
          // Keys key0 + 8a .. + 7: bits o + 8a .. of the row's words from w0.
          const int wi = (8 * a) >> 5;
          const uint32_t x = bitsFrom(m[hf][wi], wi + 1 < NW ? m[hf][wi + 1] : 0u, o);
          const int at = ((8 * a) & 31) + 2 * t;
          bits.set(a, 2 * hf, (x >> at) & 1u);
          bits.set(a, 2 * hf + 1, (x >> (at + 1)) & 1u);
        }
    }
  }
};

/// dropoutKeyMajor's keep bits (AND visibility) from the saved words: row 0
/// is key `key0` (a multiple of 16: the fragment's 16 keys share one word),
/// column 0 query `query0`. For each chunk of up to 4 atoms (8 columns) lane
/// g loads the word of column g (load: one word per lane and chunk, issued
/// early), and lane g gets bits g and g + 8 of every column's 16 keys from
/// the other 7 lanes 4j + t (expand), as dropoutKeyMajor distributes Philox
/// bits.
template <class Cfg, int NA> struct SavedKeepKeyMajor {
  static constexpr int CH = NA % 4 == 0 ? 4 : 2; // atoms per chunk (NA is even)
  static_assert(NA % CH == 0, "key-major keep bits: whole chunks of atoms");
  /// Per chunk, after load: bit r is key key0 + r of this lane's column;
  /// after exchange (chunks of 4 atoms): the chunk's bits in KeepBits' order.
  uint32_t mine[NA / CH];

  DMC_ATTN_DEV void load(const uint32_t *words, int b, int h, int key0, int query0) {
    const int g = laneId() >> 2, t = laneId() & 3;
    const int j = g % (2 * CH); // column j of a chunk: atom a0 + j/2, parity j%2
    DMC_ATTN_UNROLL
    for (int c = 0; c < NA / CH; ++c) {
      const int col = query0 + 8 * (c * CH + (j >> 1)) + 2 * t + (j & 1);
      // Keys >= Lk have no word (and are masked): 0.
      mine[c] = key0 < Cfg::kLk
                    ? savedKeepWord<Cfg>(words, b, h, col, key0 >> 5) >> (key0 & 31)
                    : 0u;
    }
  }
  /// Chunks of 4 atoms: the lanes' transposes, once the loaded words are in
  /// (a kernel calls it where it waits anyway, before its tile's barrier).
  DMC_ATTN_DEV void exchange() {
    if constexpr (CH == 4)
      DMC_ATTN_UNROLL
      for (int c = 0; c < NA / CH; ++c)
        mine[c] = transposeKeyColumns(mine[c]);
  }
  /// The fragment's keep bits (chunks of 4 atoms: after exchange).
  DMC_ATTN_DEV void expand(KeepBits<NA, true> &bits) const {
    bits.clear();
    DMC_ATTN_UNROLL
    for (int c = 0; c < NA / CH; ++c) {
      if constexpr (CH == 4)
        bits.setChunk(c, mine[c]);
      else
        setKeyColumnsBitwise<CH>(bits, c * CH, mine[c]);
    }
  }
};

} // namespace dmcattn

#endif // DMC_ATTENTION_DEVICE_MASKING_H
