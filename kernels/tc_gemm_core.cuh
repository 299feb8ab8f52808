// The fixed-point GEMM chain's arithmetic, written once for CUDA device code
// and for plain C++ (the host build that the tests run against the CPU engine).
//
// It restates, step for step, what models/gemm.py's compiled chain computes
// through models/kernels/core.py, models/kernels/lane_decoder.py and models/formats.py:
// decode each A and B word (sign, integer significand, raw exponent; a zero
// or special word gets the exponent TC_ZERO_EXP), the block anchor (the
// largest raw exponent sum, C's raw exponent when C is nonzero), never below
// the zero floor; the quantum q = anchor - window; every term cut toward zero
// to a multiple of 2**q and summed exactly in an int64; the carry bits; the
// rounding into the stage's format; and a block holding a NaN or Inf word
// decided by the specials rule (NaN; both infinities: NaN; else that Inf).
// An exact zero is +0 (zero_sign 'positive', the only sign this file models).
// Input words of any float format of models/formats.py but the fnuz ones:
// IEEE (bf16, f16, tf32 in its f32 container, e5m2), FN (e4m3) and FINITE
// (the fp6 e2m3 / e3m2 and fp4 e2m1 of kind::f8f6f4, every code a number).
//
// The integer kinds (int_mode 1 wrap, 2 saturate): s8 / u8 / s4 / u4 / b1
// words decode to their signed value; a block adds its exact sum (products,
// or a XOR b for b1 .xor) to an int64 accumulator that starts at C (an s32
// word), and the instruction's end wraps it to 32 bits or saturates it
// (models/gemm.py integer_kernel, models/model.py IntegerModel).
//
// Block scales (scale_block > 0: kind::mxf8f6f4, ue8m0 scales, one per
// scale_block K positions of a row of A and a column of B): a scale folds
// into its elements as they are decoded (tc_scaled: the raw exponent plus the
// scale's; a NaN scale makes the element NaN), so the chain anchors on the
// scaled raw exponent sums and every product is cut as the unscaled one is
// (models/kernels/scaled_kernel.py scaled_case, steps 1-3 and 7, with one
// product a group; cuda_params refuses the configurations that differ).
// The fp4 kinds (kind::mxf4, mxf4nvf4: grp_mode 1) take tc_groups_step
// instead: scaled_case's groups, merges and floor, one output element at a
// time (a ue4m3 scale's significand multiplies its element's).
//
// Parameters come at run time in TcParams (every field a long long, so that
// the Python side packs them as one int64 array: tcprobe/backends/cuda_params.py
// holds the same field order and a test checks it against this file).
#pragma once

#if defined(__CUDACC__)
#define TC_HD __host__ __device__ __forceinline__
#define TC_UNROLL _Pragma("unroll")
#else
#define TC_HD inline
#define TC_UNROLL _Pragma("GCC unroll 16")
#endif

typedef long long tc_i64;
typedef unsigned long long tc_u64;
typedef unsigned int tc_u32;

// The exponent of a zero or special decoded element: far enough below every
// real exponent (|raw| < 300) that no sum with it sets an anchor, and small
// enough for an int16 (a block with only zero terms gives +0 whatever q is).
#define TC_ZERO_EXP (-16384)
// Class bit of a K position that sparse A's metadata leaves out: a zero that
// sets no flag, whatever B holds there (models/gemm.py MASKED).
#define TC_MASKED 8

// A format as FormatSpec gives it (models/formats.py).
struct TcSpec {
  tc_i64 kind, width, exp_bits, frac_bits, bias, specials, is_signed, drop;
};

// One output stage (models/kernels/core.py Stage): format, rounding (0 RZ, 1 RNE,
// 2 RNA), kept fraction bits, NaN word, overflow (0 IEEE, 1 Inf, 2 saturate).
struct TcStage {
  TcSpec spec;
  tc_i64 rounding, keep, nan, overflow;
};

// Everything the chain needs (tcprobe/backends/cuda_params.py builds it).
struct TcParams {
  TcSpec a, b;              // A and B formats
  tc_i64 a_conv, b_conv;    // input conversion of a wider container: 0 truncate, 1 rne, 2 rna
  tc_i64 window;            // F: fraction bits kept below the anchor
  tc_i64 floor;             // the anchor is never below this
  tc_i64 carry_bits;        // integer bits above the anchor; -1: unbounded
  tc_i64 carry_top;         // 0 wrap, 1 saturate, 2 normalize
  tc_i64 block;             // L: products fused per block
  tc_i64 per_instr;         // blocks per instruction (K_instr / L)
  TcStage inter, out;       // a block result passed on; the instruction's D
  tc_i64 int_mode;          // 0 the float chain; integer kinds: 1 wrap, 2 saturate
  tc_i64 int_xor;           // integer kinds: 1 sums a XOR b (b1 .xor), 0 products
  TcSpec scale;             // the block scales' format (ue8m0, ue4m3)
  tc_i64 scale_block;       // K positions one scale covers; 0: no block scales
  // The fp4 kinds' ScaledParams (models/tcgen05_scaled.py; TC_UNSET: not a term)
  tc_i64 grp_mode;          // 1: tc_groups_step runs the instruction; 0: the chain
  tc_i64 pw, cw, sw, qf;    // product_window, c_window, scale_window, q_floor
  tc_i64 pg, cdom, mg, cmb; // product_group, c_dominant, merge_group, c_merge_bits
  tc_i64 pgcm, gf;          // per_group_c_merge, group_floor
  // AMD v_mfma designs (kernels/tc_gemm_amd.cuh; 0: none): 1 fma, 2 exact, 3 ftz,
  // 4 truncated, 5 grouped; L (P for ftz); F2 (F is window)
  tc_i64 amd, amd_l, amd_f2;
  // The chain's C (models/kernels/core_loop.py): an instruction's C words are
  // of format c, converted (c_conv 1: formats.convert, RNE) into cc, the format
  // its first block (or, with c_last, the final add) reads them in
  TcSpec c, cc;
  tc_i64 c_conv, cc_nan;    // cc_nan: the NaN word a converted NaN becomes
  tc_i64 zero_ieee;         // 1: an exact zero is -0 when no term was nonnegative (IEEE)
  tc_i64 normalized;        // 1: terms align on their leading bit (align='normalized')
  tc_i64 c_last;            // C added after the blocks, exactly, rounded by c_add: 1 the
                            // blocks start with no addend, 2 from +0 (a split model's sub-MMAs)
  TcStage c_add;
  tc_i64 c_add_ieee;        // c_add's zero signs: 1 IEEE's
  tc_i64 c_add_window;      // -1: the final add is exact; else both cut to this many bits
                            // below the larger raw exponent first (structures.ieee_add)
  tc_i64 c_every;           // blocks from one C to the next (c_last 2: a split instruction)
  // A split model's unpack (models/structures.py SplitModel.unpack): A and B
  // words of ua / ub converted (formats.convert, exact for fp8 to f16) into a / b
  tc_i64 unpack, u_nan;
  TcSpec ua, ub;
  tc_i64 c_keep;            // block-scaled zero_c 'keep': C's word when every product is zero
};

// scaled_kernel.UNSET (core.NO_FLOOR): an absent term of the quantum.
#define TC_UNSET (-(1LL << 40))

// One decoded A or B element: signed significand, raw exponent (TC_ZERO_EXP
// for zeros and specials), class (0 zero, 1 finite, 2 Inf, 3 NaN) | sign << 2,
// | TC_MASKED for a position a sparse A's metadata leaves out (gemm.MASKED).
struct TcDec {
  int sig;
  short exp;
  signed char cls;
  signed char pad;
};

// ---------------------------------------------------------------------------
// Bit helpers (models/bits.py: every shift guarded as there)

TC_HD int tc_bit_length(tc_i64 x) {
  if (x == 0) return 0;
#if defined(__CUDA_ARCH__)
  return 64 - __clzll(x);
#else
  return 64 - __builtin_clzll((tc_u64)x);
#endif
}

TC_HD tc_i64 tc_shl(tc_i64 x, tc_i64 s) {
  if (s >= 0) return (tc_i64)((tc_u64)x << s);
  s = -s;
  if (s >= 63) return 0;
  return x >> s;
}

TC_HD tc_i64 tc_low_bits(tc_i64 x, tc_i64 s) {
  if (s <= 0) return 0;
  if (s >= 63) return x;
  return x & (((tc_i64)1 << s) - 1);
}

TC_HD tc_i64 tc_mask(tc_i64 width) {
  if (width >= 64) return -1;
  return ((tc_i64)1 << width) - 1;
}

// ---------------------------------------------------------------------------
// Words (models/formats.py, models/kernels/lane_decoder.py)

// The input conversion of a word wider than its format (tf32 in an f32
// word): formats.convert_input on one word.
TC_HD tc_i64 tc_convert_input(tc_i64 w, const TcSpec& f, tc_i64 mode) {
  const tc_i64 d = f.drop;
  if (d == 0) return w;
  if (mode == 0) return w & ~tc_mask(d);
  // the class as the 32-bit container (f32) reads it: NaN keeps its payload's top bit set
  const tc_i64 e = (w >> 23) & 0xFF, fr = w & 0x7FFFFF;
  if (e == 0xFF && fr != 0) return (w | ((tc_i64)1 << (d + f.frac_bits - 1))) & ~tc_mask(d);
  const tc_i64 low = w & tc_mask(d), keep = w >> d, half = (tc_i64)1 << (d - 1);
  const bool up = mode == 1 ? (low > half || (low == half && (keep & 1) == 1)) : low >= half;
  return (keep + (up ? 1 : 0)) << d;
}

// decode_scalar for a float word, as gemm.decode_operand stores it; an
// integer word (kind 1) is its value in sig (exponent 0, class finite or zero).
TC_HD TcDec tc_decode(tc_i64 code, const TcSpec& f) {
  TcDec out;
  code &= tc_mask(f.width);
  out.pad = 0;
  if (f.kind == 1) {
    const tc_i64 v = (f.is_signed && ((code >> (f.width - 1)) & 1)) ? code - ((tc_i64)1 << f.width)
                                                                    : code;
    out.sig = (int)v;
    out.exp = 0;
    out.cls = (signed char)(v != 0 ? 1 : 0);
    return out;
  }
  const bool fnuz_nan = f.specials == 4 && code == ((tc_i64)1 << (f.width - 1));
  const tc_i64 sign = (f.is_signed && !fnuz_nan) ? (code >> (f.width - 1)) & 1 : 0;
  const tc_i64 e = (code >> (f.frac_bits + f.drop)) & tc_mask(f.exp_bits);
  const tc_i64 fr = (code >> f.drop) & tc_mask(f.frac_bits);
  int cls;
  tc_i64 sig = 0, raw = 0;
  if (f.specials == 0 && e == tc_mask(f.exp_bits)) {
    cls = fr == 0 ? 2 : 3;
  } else if (f.specials == 1 && e == tc_mask(f.exp_bits) && fr == tc_mask(f.frac_bits)) {
    cls = 3;
  } else if (fnuz_nan) {
    cls = 3;  // fnuz: 0x80 (negative zero's word) is the one NaN, of sign 0
  } else {
    raw = (e == 0 ? 1 : e) - f.bias;
    sig = e == 0 ? fr : (fr | ((tc_i64)1 << f.frac_bits));
    cls = sig == 0 ? 0 : 1;
  }
  const bool finite = cls == 1;
  out.sig = finite ? (int)(sign ? -sig : sig) : 0;
  out.exp = (short)(finite ? raw : TC_ZERO_EXP);
  out.cls = (signed char)(cls | (sign << 2));
  return out;
}

// A decoded element times its block scale (ue8m0: 2**(code - bias), all ones
// NaN; ue4m3: a float word, its significand multiplying the element's): the
// fold of scaled_case step 2. The classes multiply (a NaN scale makes NaN, a
// zero scale times Inf NaN; the class of a product of four factors does not
// depend on their order); a finite nonzero element takes the scale's
// significand and raw exponent, and keeps that raw exponent in ``pad`` (the
// scale exponent S_k of its products).
TC_HD TcDec tc_scaled(TcDec d, tc_i64 code, const TcSpec& s) {
  int scls;
  tc_i64 ssig = 1, sraw = 0;
  if (s.kind == 2) {  // e8m0
    code &= tc_mask(s.width);
    scls = code == tc_mask(s.width) ? 3 : 1;
    sraw = code - s.bias;
  } else {
    const TcDec x = tc_decode(code, s);
    scls = x.cls & 3;
    ssig = x.sig;
    sraw = x.exp;
  }
  const int x = d.cls & 3;
  int cls;
  if (x == 3 || scls == 3) cls = 3;
  else if (x == 2 || scls == 2) cls = (x == 0 || scls == 0) ? 3 : 2;
  else if (x == 0 || scls == 0) cls = 0;
  else cls = 1;
  if (cls == 1) {
    d.sig = (int)(d.sig * ssig);
    d.exp = (short)(d.exp + sraw);
    d.pad = (signed char)sraw;
  } else {
    d.sig = 0;
    d.exp = (short)TC_ZERO_EXP;
    d.pad = 0;
  }
  d.cls = (signed char)(cls | (d.cls & 4));
  return d;
}

// lane_decoder.fields: (special, sign, significand, raw exponent) of a word.
struct TcFields {
  bool special;
  tc_i64 sign, sig, raw;
};

TC_HD TcFields tc_fields(tc_i64 x, const TcSpec& f) {
  TcFields r;
  x &= tc_mask(f.width);
  r.sign = f.is_signed ? (x >> (f.width - 1)) & 1 : 0;
  const tc_i64 emask = tc_mask(f.exp_bits), fmask = tc_mask(f.frac_bits);
  const tc_i64 e = (x >> (f.frac_bits + f.drop)) & emask;
  const tc_i64 fr = (x >> f.drop) & fmask;
  if (f.specials == 0) r.special = e == emask;
  else if (f.specials == 1) r.special = e == emask && fr == fmask;
  else r.special = false;
  r.sig = fr | ((tc_i64)(e != 0 ? 1 : 0) << f.frac_bits);
  r.raw = (e != 0 ? e : 1) - f.bias;
  return r;
}

TC_HD int tc_lane_class(bool special, tc_i64 sig, const TcSpec& f) {
  if (special) return (f.specials == 1 || (sig & tc_mask(f.frac_bits)) != 0) ? 3 : 2;
  return sig == 0 ? 0 : 1;
}

TC_HD tc_i64 tc_inf_word(tc_i64 sign, const TcSpec& f) {
  const tc_i64 sbit = f.is_signed ? sign << (f.width - 1) : 0;
  if (f.specials == 0) return sbit | (tc_mask(f.exp_bits) << (f.frac_bits + f.drop));
  if (f.specials == 4) return (tc_i64)1 << (f.width - 1);
  return sbit | (f.is_signed ? tc_mask(f.width - 1) : tc_mask(f.width));
}

// formats.encode_scalar: round (-1)**sign * (mag + d) * 2**q into the format.
TC_HD tc_i64 tc_encode(tc_i64 sign, tc_i64 mag, tc_i64 q, bool sticky, const TcSpec& f,
                       tc_i64 rounding, tc_i64 keep, tc_i64 overflow) {
  const tc_i64 sbit = (f.is_signed && f.specials != 4) ? (sign << (f.width - 1)) : 0;
  if (mag == 0) return sbit;
  const tc_i64 emin = 1 - f.bias;
  const tc_i64 msb = q + tc_bit_length(mag) - 1;
  tc_i64 e = msb > emin ? msb : emin;
  const tc_i64 sh = (e - keep) - q;
  tc_i64 kept = tc_shl(mag, -sh);
  if (sh > 0 && rounding != 0) {
    const tc_i64 rem = tc_low_bits(mag, sh);
    bool up = false;
    if (sh <= 63) {
      const tc_i64 half = (tc_i64)((tc_u64)1 << (sh - 1));
      if (rounding == 1) up = rem > half || (rem == half && (sticky || (kept & 1) == 1));
      else up = rem >= half;
    }
    if (up) {
      kept += 1;
      if (kept >> (keep + 1)) {
        kept >>= 1;
        e += 1;
      }
    }
  }
  tc_i64 biased, frac;
  if (kept >> keep) {
    biased = e + f.bias;
    frac = kept & tc_mask(keep);
  } else {
    biased = 0;
    frac = kept;
  }
  tc_i64 maxb, maxf;
  if (f.specials == 0) {
    maxb = tc_mask(f.exp_bits) - 1;
    maxf = tc_mask(keep);
  } else if (f.specials == 1) {
    maxb = tc_mask(f.exp_bits);
    maxf = (tc_mask(f.frac_bits) - 1) >> (f.frac_bits - keep);
  } else {
    maxb = tc_mask(f.exp_bits);
    maxf = tc_mask(keep);
  }
  if (biased > maxb || (biased == maxb && frac > maxf)) {
    if (overflow == 2 || (overflow == 0 && rounding == 0) || f.specials == 2) {
      biased = maxb;
      frac = maxf;
    } else {
      return tc_inf_word(sign, f);
    }
  }
  if (f.specials == 4 && biased == 0 && frac == 0) return 0;
  return sbit | (((biased << f.frac_bits) | (frac << (f.frac_bits - keep))) << f.drop);
}

// ---------------------------------------------------------------------------
// The block (models/kernels/core.py)

enum { TC_NAN = 1, TC_POS_INF = 2, TC_NEG_INF = 4, TC_NONNEG = 8 };

TC_HD int tc_mul_class(int x, int y) {
  if (x == 3 || y == 3) return 3;
  if (x == 2 || y == 2) return (x == 0 || y == 0) ? 3 : 2;
  if (x == 0 || y == 0) return 0;
  return 1;
}

TC_HD int tc_term_flags(int cls, tc_i64 sign) {
  if (cls == 3) return TC_NAN;
  if (cls == 2) return sign ? TC_NEG_INF : TC_POS_INF;
  return sign ? 0 : TC_NONNEG;
}

// core.specials_word: true and *word when a special decides the block.
TC_HD bool tc_specials_word(int flags, const TcStage& st, tc_i64* word) {
  if ((flags & TC_NAN) || (flags & (TC_POS_INF | TC_NEG_INF)) == (TC_POS_INF | TC_NEG_INF)) {
    *word = st.nan;
    return true;
  }
  if (flags & (TC_POS_INF | TC_NEG_INF)) {
    *word = tc_inf_word((flags & TC_NEG_INF) ? 1 : 0, st.spec);
    return true;
  }
  return false;
}

// core.cut: (-1)**sign * sig * 2**sh cut toward zero, without branches.
TC_HD tc_i64 tc_cut(tc_i64 sig, tc_i64 sh, tc_i64 sign) {
  tc_i64 left = sh < 62 ? sh : 62;
  left = left > 0 ? left : 0;
  tc_i64 right = -sh < 63 ? -sh : 63;
  right = right > 0 ? right : 0;
  const tc_i64 u = (tc_i64)((tc_u64)sig << left) >> right;
  return (u ^ -sign) + sign;
}

// core.window_word with the flags of a +0 zero sign: the carry bits, then
// core.round_word (no sticky).
// nonneg: -1, an exact zero is +0 and so is a sum rounded to zero (zero_sign
// 'positive'); 0 or 1, IEEE zero signs (core.round_word): an exact zero is -0
// when no term was nonnegative (nonneg 0), a sum rounded to zero keeps its sign.
TC_HD tc_i64 tc_window_word(tc_i64 m, tc_i64 q, const TcParams& P, const TcStage& st,
                            int nonneg = -1) {
  // a 64-bit sum never needs 64 bits or more (core.window_word): a wider
  // accumulator holds every sum, and shifts by 64 or more are undefined
  if (P.carry_bits >= 0 && P.window + P.carry_bits + 1 < 64) {
    const tc_i64 width = P.window + P.carry_bits + 1;
    if (P.carry_top == 0) {
      const tc_i64 half = (tc_i64)1 << (width - 1);
      m = ((m + half) & (((tc_i64)1 << width) - 1)) - half;
    } else {
      const tc_i64 top = ((tc_i64)1 << (width - 1)) - 1;
      tc_i64 mag = m < 0 ? -m : m;
      if (mag > top) {
        if (P.carry_top == 1) {
          mag = top;
        } else {
          const tc_i64 sh = tc_bit_length(mag) - (width - 1);
          mag >>= sh;
          q += sh;
        }
        m = m < 0 ? -mag : mag;
      }
    }
  }
  const bool neg = m < 0;
  const tc_i64 mag = neg ? -m : m;
  if (mag == 0) return nonneg == 0 ? tc_encode(1, 0, 0, false, st.spec, 0, st.keep, 0) : 0;
  tc_i64 word = tc_encode(neg ? 1 : 0, mag, q, false, st.spec, st.rounding, st.keep, st.overflow);
  if (nonneg < 0 && (word & tc_mask(st.spec.width - 1)) == 0) word = 0;
  return word;
}

// The exact sum of two terms (sign, magnitude below 2**49, lsb) as (neg, mag,
// q) with mag below 2**62: the larger term's top bit at bit 60, the other's
// bits below bit 0 (only when it is 12 or more binades smaller) folded into a
// sticky bit 0, below any rounding point of a format of at most 24 bits: every
// rounding of (-1)**neg * mag * 2**q is that of the exact sum. A zero sum: mag 0.
TC_HD void tc_sum2_parts(tc_i64 n1, tc_i64 s1, tc_i64 l1, tc_i64 n2, tc_i64 s2, tc_i64 l2,
                         tc_i64* neg, tc_i64* mag, tc_i64* q) {
  if (s1 == 0) {
    n1 = n2; s1 = s2; l1 = l2; s2 = 0;
  }
  *neg = 0;
  *mag = 0;
  *q = 0;
  if (s1 == 0) return;
  if (s2 != 0 && l2 + tc_bit_length(s2) > l1 + tc_bit_length(s1)) {
    tc_i64 t = n1; n1 = n2; n2 = t;
    t = s1; s1 = s2; s2 = t;
    t = l1; l1 = l2; l2 = t;
  }
  *q = l1 + tc_bit_length(s1) - 61;
  tc_i64 total = s1 << (l1 - *q);
  if (n1) total = -total;
  if (s2 != 0) {
    const tc_i64 sh = l2 - *q;
    tc_i64 v;
    if (sh >= 0) v = s2 << sh;
    else if (-sh >= 63) v = 1;
    else v = (s2 >> -sh) | ((s2 & tc_mask(-sh)) != 0 ? 1 : 0);
    total += n2 ? -v : v;
  }
  *neg = total < 0 ? 1 : 0;
  *mag = total < 0 ? -total : total;
}

// formats.convert of one word (RNE, IEEE overflow): a NaN becomes the
// destination's canonical NaN, an Inf its Inf, a zero keeps its sign.
TC_HD tc_i64 tc_convert_word(tc_i64 w, const TcSpec& src, const TcSpec& dst, tc_i64 dst_nan) {
  const TcFields f = tc_fields(w, src);
  const int cls = tc_lane_class(f.special, f.sig, src);
  if (cls == 3) return dst_nan;
  if (cls == 2) return tc_inf_word(f.sign, dst);
  return tc_encode(f.sign, f.sig, f.raw - src.frac_bits, false, dst, 1, dst.frac_bits, 0);
}

// core_loop.c_last_word: the blocks' result ``acc`` (inter's format) plus C
// (cc), specials first, then summed exactly and rounded once by c_add.
TC_HD tc_i64 tc_c_last_word(const TcParams& P, tc_i64 acc, tc_i64 c) {
  const TcSpec as = P.c_last == 2 ? P.out.spec : P.inter.spec;  // the blocks' last stage
  const TcFields x = tc_fields(acc, as), y = tc_fields(c, P.cc);
  const int flags = tc_term_flags(tc_lane_class(x.special, x.sig, as), x.sign) |
                    tc_term_flags(tc_lane_class(y.special, y.sig, P.cc), y.sign);
  tc_i64 word;
  if (tc_specials_word(flags, P.c_add, &word)) return word;
  tc_i64 neg, mag, q;
  if (P.c_add_window >= 0) {  // a fixed-point merge: one window on the larger raw exponent
    tc_i64 top = x.sig != 0 ? x.raw : (tc_i64)TC_ZERO_EXP;
    top = y.sig != 0 && y.raw > top ? y.raw : top;
    q = top - P.c_add_window;
    const tc_i64 m = tc_cut(x.sig, x.raw - as.frac_bits - q, x.sign) +
                     tc_cut(y.sig, y.raw - P.cc.frac_bits - q, y.sign);
    neg = m < 0 ? 1 : 0;
    mag = m < 0 ? -m : m;
  } else {
    tc_sum2_parts(x.sign, x.sig, x.raw - as.frac_bits, y.sign, y.sig, y.raw - P.cc.frac_bits,
                  &neg, &mag, &q);
  }
  const TcStage& st = P.c_add;
  if (mag == 0) return (P.c_add_ieee && !(flags & TC_NONNEG))
                           ? tc_encode(1, 0, 0, false, st.spec, 0, st.keep, 0) : 0;
  word = tc_encode(neg, mag, q, false, st.spec, st.rounding, st.keep, st.overflow);
  if (!P.c_add_ieee && (word & tc_mask(st.spec.width - 1)) == 0) word = 0;
  return word;
}

// One block of the chain for one output element: ``acc`` is C or the
// previous block's word (in out.spec when the block starts an instruction,
// else in inter.spec); a[t] and b[t * bs] for t < L are the block's decoded
// A row and B column. Returns the block's word (out.spec when it ends an
// instruction, else inter.spec). models/gemm.py _kernel, one j.
// LC: L as a compile-time constant (0: L at run time), so that the loops
// unroll and the second pass reuses the first one's loads.
template <int LC>
TC_HD tc_u32 tc_block_step(const TcParams& P, tc_u32 acc, bool starts, bool ends,
                           const TcDec* a, const TcDec* b, int bs, int L_run) {
  const int L = LC > 0 ? LC : L_run;
  // the addend: C (read in cc) when the block starts an instruction, else the
  // previous block's word; none for an instruction's first block with c_last
  const TcSpec in = starts ? P.cc : P.inter.spec;  // by value: no pointer into kernel parameters
  const TcStage st = (ends && P.c_last != 1) ? P.out : P.inter;
  const bool has_c = !(starts && P.c_last == 1);
  TcFields c = tc_fields((tc_i64)acc, in);
  if (!has_c) c.special = false, c.sign = 0, c.sig = 0;
  const tc_i64 clsb = c.raw - in.frac_bits;
  const tc_i64 fab = P.a.frac_bits + P.b.frac_bits;
  tc_i64 amax = c.sig != 0 ? c.raw : (tc_i64)TC_ZERO_EXP;
  int slow = c.special ? 2 : 0;
  if (P.normalized) {  // align='normalized': each term's leading bit
    if (c.sig != 0) amax = clsb + tc_bit_length(c.sig) - 1;
    for (int t = 0; t < L; ++t) {
      const TcDec x = a[t], y = b[t * bs];
      const tc_i64 p = (tc_i64)x.sig * y.sig;
      const tc_i64 e = (tc_i64)x.exp + y.exp - fab + tc_bit_length(p < 0 ? -p : p) - 1;
      amax = p != 0 && e > amax ? e : amax;
      slow |= (x.cls | y.cls) & 2;
    }
  } else {
    TC_UNROLL for (int t = 0; t < L; ++t) {
      const TcDec x = a[t], y = b[t * bs];
      const tc_i64 e = (tc_i64)x.exp + y.exp;
      amax = e > amax ? e : amax;
      slow |= (x.cls | y.cls) & 2;
    }
  }
  const tc_i64 top = amax > P.floor ? amax : P.floor;
  const tc_i64 q = top - P.window;
  tc_i64 m = tc_cut(c.sig, clsb - q, c.sign);
  const tc_i64 pre = P.window - fab;
  if (pre >= 0 && P.window <= 28 && fab <= 22 && !P.normalized) {
    // The same cut in 32 bits: a product's magnitude is below 2**(fab + 2),
    // so |p| * 2**pre < 2**(F + 2) <= 2**30, and its cut to 2**q is that
    // shifted right by top - e >= 0 (tc_cut's shift is e - fab - q = pre - (top - e)).
    const int itop = (int)(top < 0x40000000 ? top : 0x40000000);
    TC_UNROLL for (int t = 0; t < L; ++t) {
      const TcDec x = a[t], y = b[t * bs];
      const int p = x.sig * y.sig;
      const int neg = p >> 31;
      int r = itop - ((int)x.exp + (int)y.exp);
      r = r < 31 ? r : 31;
      const int u = (int)(((unsigned)((p ^ neg) - neg) << pre) >> r);
      m += (tc_i64)((u ^ neg) - neg);
    }
  } else {
    TC_UNROLL for (int t = 0; t < L; ++t) {
      const TcDec x = a[t], y = b[t * bs];
      const tc_i64 p = (tc_i64)x.sig * (tc_i64)y.sig;
      const tc_i64 neg = p >> 63;
      m += tc_cut((p ^ neg) - neg, (tc_i64)x.exp + y.exp - fab - q, neg & 1);
    }
  }
  if (slow) {
    int flags = has_c ? tc_term_flags(tc_lane_class(c.special, c.sig, in), c.sign) : 0;
    TC_UNROLL for (int t = 0; t < L; ++t) {
      const int x = a[t].cls, y = b[t * bs].cls;
      if (!(x & TC_MASKED)) flags |= tc_term_flags(tc_mul_class(x & 3, y & 3), ((x ^ y) >> 2) & 1);
    }
    tc_i64 word;
    if (tc_specials_word(flags, st, &word)) return (tc_u32)word;
  }
  int nonneg = -1;
  if (P.zero_ieee) {  // core.term_flags' NONNEG: the addend or a product, finite or zero, of sign +
    nonneg = has_c && !c.sign ? 1 : 0;  // (no special is left here)
    for (int t = 0; t < L; ++t) {
      const int x = a[t].cls, y = b[t * bs].cls;  // a masked position: +0 * +0 (Cases.masked)
      if ((x & TC_MASKED) || !((x ^ y) & 4)) nonneg = 1;
    }
  }
  return (tc_u32)tc_window_word(m, q, P, st, nonneg);
}

// One block of an integer kind for one element of D: ``acc`` (C, or the sum
// so far, exact in an int64) plus the block's exact sum of products (or of
// a XOR b); at the instruction's end the sum wraps to 32 bits or saturates.
template <int LC>
TC_HD tc_i64 tc_int_step(const TcParams& P, tc_i64 acc, bool ends, const TcDec* a,
                         const TcDec* b, int bs, int L_run) {
  const int L = LC > 0 ? LC : L_run;
  tc_i64 s = 0;
  if (P.int_xor) {  // a sparse A's left-out position is 0 XOR 0 (Cases.masked zeroes B there too)
    TC_UNROLL for (int t = 0; t < L; ++t)
      s += (a[t].cls & TC_MASKED) ? 0 : (tc_i64)(a[t].sig ^ b[t * bs].sig);
  } else {
    TC_UNROLL for (int t = 0; t < L; ++t) s += (tc_i64)a[t].sig * (tc_i64)b[t * bs].sig;
  }
  acc += s;
  if (ends) {
    const tc_i64 lo = -((tc_i64)1 << 31), hi = ((tc_i64)1 << 31) - 1;
    if (P.int_mode == 2) acc = acc < lo ? lo : (acc > hi ? hi : acc);
    else acc = ((acc - lo) & (((tc_i64)1 << 32) - 1)) + lo;
  }
  return acc;
}
