// AMD CDNA v_mfma designs (models/amd.py), written once for CUDA device code
// and for the host build, on the decoded elements of tc_gemm_core.cuh.
//
// Every design chains f32 words: an instruction's D (and each block's result
// inside it) is the next block's addend, so a GEMM's K runs as blocks of the
// design whatever the instruction boundaries. One call of tc_amd_step runs one
// instruction (K elements of a row of A and a column of B) on ``acc``:
//
//   1 fma        a chain of IEEE FMAs, C first, each rounded to nearest even
//   2 exact      blocks of L products and the addend summed exactly (TcExact:
//                a fixed-point accumulator of 32-bit limbs), rounded once
//   3 ftz        each product rounded into f32, added in pairs (P = 2) or a tree of two
//                pairs (P = 4), every f32 result flushed to a zero of its sign when subnormal
//   4 truncated  blocks of L products cut toward zero to F bits on their largest exponent
//                sum, joined with C at F2 + 1 and F bits, floored to F2 bits, then RNE
//   5 grouped    as truncated without the product overflow, the even and the odd K
//                positions two sums, a C far below the products dropped
//
// The NaN words are models/amd.py's: the host's IEEE rules for fma/exact/ftz
// (a NaN operand quieted, its payload kept; an invalid operation the default
// NaN 0xFFC00000), 0x7FFFFFFF for truncated/grouped. An element decoded for
// these designs keeps, when it is a NaN, its raw word (before the input
// conversion) in ``sig`` (tc_amd_decode), which the payload rules read.
#pragma once

#define TC_AMD_NAN 0x7FFFFFFFLL
#define TC_DEFAULT_NAN 0xFFC00000LL  // x86-64's default NaN: what an invalid operation writes

// An element for the AMD designs: class, sign, magnitude, exponent of its last
// bit, raw exponent, and the word (NaNs).
struct TcVal {
  int cls;
  tc_i64 sign, sig, lsb, raw, word;
};

TC_HD TcSpec tc_f32_spec() {
  TcSpec s = {0, 32, 8, 23, 127, 0, 1, 0};
  return s;
}

// tc_decode plus the raw word of a NaN in sig.
TC_HD TcDec tc_amd_decode(tc_i64 w, const TcSpec& f, tc_i64 conv) {
  TcDec d = tc_decode(tc_convert_input(w, f, conv), f);
  if ((d.cls & 3) == 3) d.sig = (int)(tc_u32)(w & tc_mask(f.width));
  return d;
}

TC_HD TcVal tc_val(const TcDec& d, const TcSpec& f) {
  TcVal v;
  v.cls = d.cls & 3;
  v.sign = (d.cls >> 2) & 1;
  v.sig = v.cls == 1 ? (d.sig < 0 ? -(tc_i64)d.sig : (tc_i64)d.sig) : 0;
  v.raw = v.cls == 1 ? (tc_i64)d.exp : (v.cls == 0 ? 1 - f.bias : 0);
  v.lsb = v.cls <= 1 ? v.raw - f.frac_bits : 0;
  v.word = v.cls == 3 ? (tc_i64)(tc_u32)d.sig : 0;
  return v;
}

// formats.decode of an f32 word.
TC_HD TcVal tc_val32(tc_i64 w) {
  TcVal v;
  w &= 0xFFFFFFFFLL;
  const tc_i64 e = (w >> 23) & 0xFF, fr = w & 0x7FFFFF;
  v.word = w;
  v.sign = w >> 31;
  if (e == 0xFF) {
    v.cls = fr == 0 ? 2 : 3;
    v.sig = v.lsb = v.raw = 0;
    return v;
  }
  v.raw = (e == 0 ? 1 : e) - 127;
  v.sig = e == 0 ? fr : (fr | (1LL << 23));
  v.cls = v.sig == 0 ? 0 : 1;
  v.lsb = v.raw - 23;
  return v;
}

TC_HD tc_i64 tc_quiet32(tc_i64 w) { return (w | (1LL << 22)) & 0xFFFFFFFFLL; }

TC_HD tc_i64 tc_inf32(tc_i64 sign) { return (sign << 31) | 0x7F800000LL; }

TC_HD tc_i64 tc_rne32(tc_i64 neg, tc_i64 mag, tc_i64 q, bool sticky) {
  const TcSpec f = tc_f32_spec();
  return tc_encode(neg, mag, q, sticky, f, 1, 23, 0) & 0xFFFFFFFFLL;
}

// The f32 word of the exact sum of two terms (sign, magnitude below 2**49, lsb),
// rounded to nearest even; an exact zero is +0. The larger term's top bit goes
// to bit 60; the other term's bits below bit 0 (only when it is 12 or more
// binades smaller) fold into a sticky bit 0, below a rounding point at bit 36
// or higher: the rounding is that of the exact sum.
TC_HD tc_i64 tc_sum2(tc_i64 n1, tc_i64 s1, tc_i64 l1, tc_i64 n2, tc_i64 s2, tc_i64 l2) {
  if (s1 == 0) {
    if (s2 == 0) return 0;
    n1 = n2; s1 = s2; l1 = l2; s2 = 0;
  }
  if (s2 != 0 && l2 + tc_bit_length(s2) > l1 + tc_bit_length(s1)) {
    tc_i64 t = n1; n1 = n2; n2 = t;
    t = s1; s1 = s2; s2 = t;
    t = l1; l1 = l2; l2 = t;
  }
  const tc_i64 q = l1 + tc_bit_length(s1) - 61;
  tc_i64 total = s1 << (l1 - q);
  if (n1) total = -total;
  if (s2 != 0) {
    const tc_i64 sh = l2 - q;
    tc_i64 v;
    if (sh >= 0) v = s2 << sh;
    else if (-sh >= 63) v = 1;
    else v = (s2 >> -sh) | ((s2 & tc_mask(-sh)) != 0 ? 1 : 0);
    total += n2 ? -v : v;
  }
  if (total == 0) return 0;
  return tc_rne32(total < 0, total < 0 ? -total : total, q, false);
}

// amd.fma_word in f32: a NaN operand quieted (a's, b's, then c's), an invalid
// operation the default NaN, a zero sum of zeros signed as IEEE's.
TC_HD tc_i64 tc_fma32(const TcVal& a, const TcVal& b, const TcVal& c) {
  if (a.cls == 3) return tc_quiet32(a.word);
  if (b.cls == 3) return tc_quiet32(b.word);
  if (c.cls == 3) return tc_quiet32(c.word);
  const tc_i64 sp = a.sign ^ b.sign;
  const bool inf_p = a.cls == 2 || b.cls == 2, zero_p = a.cls == 0 || b.cls == 0;
  if (inf_p && (zero_p || (c.cls == 2 && c.sign != sp))) return TC_DEFAULT_NAN;
  if (inf_p) return tc_inf32(sp);
  if (c.cls == 2) return c.word;
  if (zero_p && c.cls == 0) return (sp & c.sign) << 31;
  return tc_sum2(sp, a.sig * b.sig, a.lsb + b.lsb, c.sign, c.sig, c.lsb);
}

// amd._add: x + y in f32 (of two NaNs, y's quieted).
TC_HD tc_i64 tc_add32(const TcVal& x, const TcVal& y) {
  if (y.cls == 3) return tc_quiet32(y.word);
  if (x.cls == 3) return tc_quiet32(x.word);
  if (x.cls == 2 && y.cls == 2 && x.sign != y.sign) return TC_DEFAULT_NAN;
  if (x.cls == 2) return x.word;
  if (y.cls == 2) return y.word;
  if (x.cls == 0 && y.cls == 0) return (x.sign & y.sign) << 31;
  return tc_sum2(x.sign, x.sig, x.lsb, y.sign, y.sig, y.lsb);
}

// amd._flush: a subnormal f32 word read as the zero of its sign.
TC_HD TcVal tc_flush(tc_i64 w) {
  const TcVal v = tc_val32(w);
  return (v.cls == 1 && ((w >> 23) & 0xFF) == 0) ? tc_val32(w & 0x80000000LL) : v;
}

// amd._to_f32: an element as an f32 word (exact; a NaN as the host widens it).
TC_HD tc_i64 tc_to32(const TcVal& v, const TcSpec& f) {
  if (v.cls == 3)
    return tc_quiet32((v.sign << 31) | 0x7F800000LL
                      | ((v.word & tc_mask(f.frac_bits)) << (23 - f.frac_bits)));
  if (v.cls == 2) return tc_inf32(v.sign);
  if (v.cls == 0) return v.sign << 31;
  return tc_rne32(v.sign, v.sig, v.lsb, false);
}

// ---------------------------------------------------------------------------
// exact (the limbs: kernels/tc_gemm_exact.cuh)

// The f32 word of the accumulated sum, rounded to nearest even once (+0 when zero).
TC_HD tc_i64 tc_exact_word(TcExact& x) {
  tc_i64 neg, mag, q;
  bool sticky;
  tc_exact_parts(x, &neg, &mag, &q, &sticky);
  return mag == 0 && !sticky ? 0 : tc_rne32(neg, mag, q, sticky);
}

// amd._exact_block: C + the products lo..hi-1 exactly, rounded once; specials
// as the host's double arithmetic (the first NaN, each product's b before its
// a, in K order, then C's, quieted; Inf * 0 or Infs of both signs the default NaN).
TC_HD tc_i64 tc_exact_block(const TcParams& P, const TcVal& c, const TcDec* a, const TcDec* b,
                            int bs, int lo, int hi) {
  for (int t = lo; t < hi; ++t) {
    const TcVal x = tc_val(a[t], P.a), y = tc_val(b[t * bs], P.b);
    if (y.cls == 3) return tc_to32(y, P.a);  // widened as A's format (models/amd.py's src)
    if (x.cls == 3) return tc_to32(x, P.a);
  }
  if (c.cls == 3) return tc_quiet32(c.word);
  int infs = 0;  // bit 0: +Inf, bit 1: -Inf
  for (int t = lo; t < hi; ++t) {
    const TcVal x = tc_val(a[t], P.a), y = tc_val(b[t * bs], P.b);
    if (x.cls == 2 || y.cls == 2) {
      if (x.cls == 0 || y.cls == 0) return TC_DEFAULT_NAN;
      infs |= 1 << (x.sign ^ y.sign);
    }
  }
  if (c.cls == 2) infs |= 1 << c.sign;
  if (infs == 3) return TC_DEFAULT_NAN;
  if (infs) return tc_inf32(infs == 2 ? 1 : 0);
  TcExact acc;
  for (int i = 0; i < TC_LIMBS; ++i) acc.limb[i] = 0;
  const tc_i64 la = 1 - P.a.bias - P.a.frac_bits, lb = 1 - P.b.bias - P.b.frac_bits;
  acc.base = la + lb < -149 ? la + lb : -149;
  for (int t = lo; t < hi; ++t) {
    const TcVal x = tc_val(a[t], P.a), y = tc_val(b[t * bs], P.b);
    tc_exact_add(acc, x.sign ^ y.sign, x.sig * y.sig, x.lsb + y.lsb);
  }
  tc_exact_add(acc, c.sign, c.sig, c.lsb);
  return tc_exact_word(acc);
}

// ---------------------------------------------------------------------------
// truncated / grouped (MMA-Sim's fused sums)

TC_HD tc_i64 tc_floor_shift(tc_i64 x, tc_i64 sh) {
  if (sh >= 0) return (tc_i64)((tc_u64)x << (sh < 63 ? sh : 63));
  return x >> (-sh < 63 ? -sh : 63);
}

// amd._finish: the products' sum s_dot * 2**(e_dot - F) joined with C, rounded into f32.
TC_HD tc_i64 tc_finish(const TcParams& P, tc_i64 s_dot, tc_i64 e_dot, const TcVal& c,
                       bool drop_far) {
  const tc_i64 F = P.window, F2 = P.amd_f2;
  const tc_i64 e_max = e_dot > c.raw ? e_dot : c.raw;
  const tc_i64 d = tc_floor_shift(s_dot, e_dot - F - (e_max - F2 - 1));
  tc_i64 cq = tc_floor_shift(c.sign ? -c.sig : c.sig, c.lsb - (e_max - F));
  if (drop_far && c.raw < e_max - F - 1) cq = 0;
  tc_i64 t = d + tc_floor_shift(cq, F2 + 1 - F);
  if (t == 0) return 0;
  tc_i64 unit = e_max - F2 - 1;
  tc_i64 e_norm = tc_bit_length(t < 0 ? -t : t) - 1 + unit;
  e_norm = e_norm > -126 ? e_norm : -126;
  t = tc_floor_shift(t, unit - (e_norm - F2));
  unit = e_norm - F2;
  return tc_rne32(t < 0, t < 0 ? -t : t, unit, false);
}

// One block lo..hi (every ``step``-th position from lo + ``first``): the
// products' specials (bit 0 NaN, 1 +Inf, 2 -Inf; with ``overflow`` a product
// of 2**128 or more is an Inf), and their sum cut toward zero to F bits below
// the largest exponent sum *e (TC_ZERO_EXP when every product is zero).
TC_HD int tc_fused(const TcParams& P, const TcDec* a, const TcDec* b, int bs, int lo, int hi,
                   int first, int step, bool overflow, tc_i64* s, tc_i64* e) {
  int flags = 0;
  tc_i64 e_max = TC_ZERO_EXP;
  for (int t = lo + first; t < hi; t += step) {
    const TcVal x = tc_val(a[t], P.a), y = tc_val(b[t * bs], P.b);
    const tc_i64 sp = x.sign ^ y.sign, sig = x.sig * y.sig;
    const bool nan = x.cls == 3 || y.cls == 3 || ((x.cls == 2 || y.cls == 2) &&
                                                   (x.cls == 0 || y.cls == 0));
    const bool big = overflow && sig != 0 && x.lsb + y.lsb + tc_bit_length(sig) - 1 >= 128;
    if (nan) flags |= 1;
    else if (x.cls == 2 || y.cls == 2 || big) flags |= 2 << sp;
    else if (sig != 0 && x.raw + y.raw > e_max) e_max = x.raw + y.raw;
  }
  tc_i64 sum = 0;
  for (int t = lo + first; t < hi; t += step) {
    const TcVal x = tc_val(a[t], P.a), y = tc_val(b[t * bs], P.b);
    if (x.cls != 1 || y.cls != 1) continue;
    sum += tc_cut(x.sig * y.sig, x.lsb + y.lsb - e_max + P.window, x.sign ^ y.sign);
  }
  *s = sum;
  *e = e_max;
  return flags;
}

TC_HD tc_i64 tc_truncated_block(const TcParams& P, const TcVal& c, const TcDec* a,
                                const TcDec* b, int bs, int lo, int hi) {
  tc_i64 s, e;
  int flags = tc_fused(P, a, b, bs, lo, hi, 0, 1, true, &s, &e);
  if (c.cls == 3) flags |= 1;
  if (c.cls == 2) flags |= 2 << c.sign;
  if ((flags & 1) || (flags & 6) == 6) return TC_AMD_NAN;
  if (flags) return tc_inf32(flags == 4 ? 1 : 0);
  return tc_finish(P, s, e, c, false);
}

TC_HD tc_i64 tc_grouped_block(const TcParams& P, const TcVal& c, const TcDec* a,
                              const TcDec* b, int bs, int lo, int hi) {
  tc_i64 se, ee, so, eo;
  const int fe = tc_fused(P, a, b, bs, lo, hi, 0, 2, false, &se, &ee);
  const int fo = tc_fused(P, a, b, bs, lo, hi, 1, 2, false, &so, &eo);
  if (fe | fo) return TC_AMD_NAN;  // fp8 has no Inf: a special product is a NaN
  const tc_i64 e_dot = ee > eo ? ee : eo;
  const tc_i64 s_dot = tc_floor_shift(se, ee - e_dot) + tc_floor_shift(so, eo - e_dot);
  if (c.cls >= 2) {  // C's exponent reads as -1: dropped when far below the products
    if (e_dot > TC_ZERO_EXP && -1 < e_dot - P.window - 1)
      return tc_finish(P, s_dot, e_dot, tc_val32(0), false);
    return c.cls == 3 ? TC_AMD_NAN : c.word;
  }
  return tc_finish(P, s_dot, e_dot, c, true);
}

// ---------------------------------------------------------------------------
// ftz (CDNA2)

// A 16-bit input flushed: subnormals and zeros of either sign read as +0
// (read by the fields of ``f``: raw 1 - bias and no leading bit).
TC_HD TcVal tc_flush_in(TcVal v, const TcSpec& f) {
  if (v.cls <= 1 && v.raw == 1 - f.bias && v.sig < (1LL << f.frac_bits)) {
    v.cls = 0;
    v.sign = 0;
    v.sig = 0;
    v.raw = 1 - f.bias;
    v.lsb = v.raw - f.frac_bits;
  }
  return v;
}

// amd._mul_f32 then _flush: fma(b, a, -0) of the inputs widened to f32. Both
// are flushed and widened by A's format (models/amd.py's ``src``: the same
// for CDNA2's f16 and bf16; a mixed pair reads B's subnormals by A's).
TC_HD TcVal tc_ftz_product(const TcParams& P, const TcDec& da, const TcDec& db) {
  const TcVal x = tc_val32(tc_to32(tc_flush_in(tc_val(da, P.a), P.a), P.a));
  const TcVal y = tc_val32(tc_to32(tc_flush_in(tc_val(db, P.b), P.a), P.a));
  return tc_flush(tc_fma32(y, x, tc_val32(0x80000000LL)));
}

// ---------------------------------------------------------------------------
// One instruction of K products on the f32 word acc.

TC_HD tc_u32 tc_amd_step(const TcParams& P, tc_u32 acc, const TcDec* a, const TcDec* b, int bs,
                         int K) {
  const int L = (int)P.amd_l;
  if (P.amd == 1) {
    tc_i64 d = acc;
    for (int t = 0; t < K; ++t)
      d = tc_fma32(tc_val(a[t], P.a), tc_val(b[t * bs], P.b), tc_val32(d));
    return (tc_u32)d;
  }
  if (P.amd == 3) {
    const TcVal c = tc_val32(acc);
    TcVal d = (c.cls == 0 || ((acc >> 23) & 0xFF) == 0) ? tc_val32(0) : c;
    if (c.cls >= 2) d = c;
    for (int t = 0; t + L <= K; t += L) {
      TcVal s = tc_flush(tc_add32(tc_ftz_product(P, a[t], b[t * bs]),
                                  tc_ftz_product(P, a[t + 1], b[(t + 1) * bs])));
      if (L == 4)
        s = tc_flush(tc_add32(s, tc_flush(tc_add32(tc_ftz_product(P, a[t + 2], b[(t + 2) * bs]),
                                                   tc_ftz_product(P, a[t + 3],
                                                                  b[(t + 3) * bs])))));
      d = tc_flush(tc_add32(d, s));
    }
    return (tc_u32)d.word;
  }
  tc_i64 d = acc;
  for (int lo = 0; lo < K; lo += L) {
    const int hi = lo + L < K ? lo + L : K;
    const TcVal c = tc_val32(d);
    if (P.amd == 2) d = tc_exact_block(P, c, a, b, bs, lo, hi);
    else if (P.amd == 4) d = tc_truncated_block(P, c, a, b, bs, lo, hi);
    else d = tc_grouped_block(P, c, a, b, bs, lo, hi);
  }
  return (tc_u32)d;
}
