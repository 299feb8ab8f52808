// Exact sums (models/kernels/core.py exact_sum), written once for CUDA device
// code and the host build: a fixed-point accumulator of 32-bit limbs in int64s
// (carry-save: a term touches three limbs, the carries move at the end), and
// the chain's block with no window (window_bits=None: tc_exact_step), where the
// terms are summed uncut and the sum rounded once into the stage's format.
#pragma once

#define TC_LIMBS 18  // 576 bits: any exact sum of 32-bit float products and an addend

struct TcExact {
  tc_i64 limb[TC_LIMBS];
  tc_i64 base;
};

TC_HD void tc_exact_add(TcExact& x, tc_i64 neg, tc_i64 sig, tc_i64 lsb) {
  if (sig == 0) return;
  const tc_i64 p = lsb - x.base;
  const int i = (int)(p >> 5), off = (int)(p & 31);
  const tc_i64 lo = (sig & 0xFFFFFFFFLL) << off, hi = (sig >> 32) << off;
  const tc_i64 part[3] = {lo & 0xFFFFFFFFLL, (lo >> 32) + (hi & 0xFFFFFFFFLL), hi >> 32};
  for (int j = 0; j < 3 && i + j < TC_LIMBS; ++j) x.limb[i + j] += neg ? -part[j] : part[j];
}

// The accumulated sum as (neg, mag, q, sticky): (-1)**neg * (mag + d) * 2**q,
// mag of at most 62 bits, 0 <= d < 1 and d > 0 exactly when sticky (core._wide_result).
TC_HD void tc_exact_parts(TcExact& x, tc_i64* neg_out, tc_i64* mag_out, tc_i64* q_out,
                          bool* sticky_out) {
  tc_i64 carry = 0;
  for (int i = 0; i < TC_LIMBS; ++i) {
    const tc_i64 v = x.limb[i] + carry;
    x.limb[i] = v & 0xFFFFFFFFLL;
    carry = v >> 32;
  }
  const tc_i64 neg = carry < 0 ? 1 : 0;
  if (neg) {
    carry = 0;
    for (int i = 0; i < TC_LIMBS; ++i) {
      const tc_i64 v = -x.limb[i] + carry;
      x.limb[i] = v & 0xFFFFFFFFLL;
      carry = v >> 32;
    }
  }
  int top = -1;
  for (int i = TC_LIMBS - 1; i >= 0 && top < 0; --i)
    if (x.limb[i] != 0) top = i;
  *neg_out = neg;
  *mag_out = 0;
  *q_out = 0;
  *sticky_out = false;
  if (top < 0) return;
  const tc_i64 msb = 32LL * top + tc_bit_length(x.limb[top]) - 1;
  const tc_i64 cut = msb > 61 ? msb - 61 : 0;  // keep the top 62 bits, the rest sticky
  tc_i64 mag = 0;
  bool sticky = false;
  for (int i = 0; i <= top; ++i) {
    const tc_i64 sh = 32LL * i - cut;
    mag += tc_shl(x.limb[i], sh);
    if (sh < 0) sticky = sticky || tc_low_bits(x.limb[i], -sh) != 0;
  }
  *mag_out = mag;
  *q_out = x.base + cut;
  *sticky_out = sticky;
}

TC_HD void tc_exact_clear(TcExact& x, tc_i64 base) {
  for (int i = 0; i < TC_LIMBS; ++i) x.limb[i] = 0;
  x.base = base;
}

// One block of the chain with no window (tc_block_step's addend, stages and
// specials; core.block_word with bits < 0): the addend and the products summed
// exactly, rounded once into the stage's format, the zero sign as round_word's.
TC_HD tc_u32 tc_exact_step(const TcParams& P, tc_u32 acc, bool starts, bool ends,
                           const TcDec* a, const TcDec* b, int bs, int L) {
  const TcSpec in = starts ? P.cc : P.inter.spec;
  const TcStage st = (ends && P.c_last != 1) ? P.out : P.inter;
  const bool has_c = !(starts && P.c_last == 1);
  TcFields c = tc_fields((tc_i64)acc, in);
  if (!has_c) c.special = false, c.sign = 0, c.sig = 0;
  int flags = has_c ? tc_term_flags(tc_lane_class(c.special, c.sig, in), c.sign) : 0;
  for (int t = 0; t < L; ++t) {
    const int x = a[t].cls, y = b[t * bs].cls;  // a masked position: +0 * +0 (Cases.masked)
    flags |= (x & TC_MASKED) ? TC_NONNEG
                             : tc_term_flags(tc_mul_class(x & 3, y & 3), ((x ^ y) >> 2) & 1);
  }
  tc_i64 word;
  if (tc_specials_word(flags, st, &word)) return (tc_u32)word;
  const tc_i64 lp = (1 - P.a.bias - P.a.frac_bits) + (1 - P.b.bias - P.b.frac_bits);
  const tc_i64 lc = 1 - in.bias - in.frac_bits;
  TcExact x;
  tc_exact_clear(x, lp < lc ? lp : lc);
  if (c.sig != 0) tc_exact_add(x, c.sign, c.sig, c.raw - in.frac_bits);
  const tc_i64 fab = P.a.frac_bits + P.b.frac_bits;
  for (int t = 0; t < L; ++t) {
    const TcDec u = a[t], v = b[t * bs];
    const tc_i64 p = (tc_i64)u.sig * v.sig;
    if (p != 0) tc_exact_add(x, p < 0 ? 1 : 0, p < 0 ? -p : p, (tc_i64)u.exp + v.exp - fab);
  }
  tc_i64 neg, mag, q;
  bool sticky;
  tc_exact_parts(x, &neg, &mag, &q, &sticky);
  if (mag == 0 && !sticky)
    return (tc_u32)tc_encode(P.zero_ieee && !(flags & TC_NONNEG) ? 1 : 0, 0, 0, false, st.spec, 0,
                             st.keep, 0);
  word = tc_encode(neg, mag, q, sticky, st.spec, st.rounding, st.keep, st.overflow);
  if (!P.zero_ieee && (word & tc_mask(st.spec.width - 1)) == 0) word = 0;
  return (tc_u32)word;
}
