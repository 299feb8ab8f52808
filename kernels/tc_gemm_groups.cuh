// The fp4 kinds of block-scaled tcgen05 (kind::mxf4, mxf4nvf4), written once
// for CUDA device code and the host build on tc_gemm_core.cuh's decoded
// elements: models/kernels/scaled_kernel.py scaled_case, steps 1-7, one
// output element at a time (tc_groups_step; cuda_params packs grp_mode 1).
#pragma once

// ---------------------------------------------------------------------------
// The fp4 kinds (models/kernels/scaled_kernel.py scaled_case, steps 1-7)

// The exact sum of the products lo..hi-1 of one element: *total * 2***base
// (scaled_kernel._group_sum: base the smallest lsb of a nonzero product;
// 2**40 and 0 for none), with the group's largest raw and scale exponents.
TC_HD void tc_group_sum(const TcDec* a, const TcDec* b, int bs, int lo, int hi, tc_i64 fab,
                        tc_i64* total, tc_i64* base, tc_i64* g_raw, tc_i64* g_scale) {
  tc_i64 lsb_min = (tc_i64)1 << 40, r = TC_UNSET, s = TC_UNSET;
  for (int t = lo; t < hi; ++t) {
    const TcDec x = a[t], y = b[t * bs];
    if (x.sig != 0 && y.sig != 0) {
      const tc_i64 e = (tc_i64)x.exp + y.exp;
      lsb_min = e - fab < lsb_min ? e - fab : lsb_min;
      r = e > r ? e : r;
      s = (tc_i64)x.pad + y.pad > s ? (tc_i64)x.pad + y.pad : s;
    }
  }
  tc_i64 sum = 0;
  for (int t = lo; t < hi; ++t) {
    const TcDec x = a[t], y = b[t * bs];
    if (x.sig != 0 && y.sig != 0) {
      const tc_i64 p = (tc_i64)x.sig * y.sig, v = (p < 0 ? -p : p)
                                                  << ((tc_i64)x.exp + y.exp - fab - lsb_min);
      sum += p < 0 ? -v : v;
    }
  }
  *total = sum;
  *base = lsb_min;
  *g_raw = r;
  *g_scale = s;
}

TC_HD tc_i64 tc_cut_signed(tc_i64 total, tc_i64 sh) {
  const tc_i64 neg = total < 0 ? 1 : 0;
  return tc_cut(neg ? -total : total, sh, neg);
}

// Group g's sum as scaled_case forms it, with its alignment exponent and the
// per-group C cut applied (c_raw: raw(C) when C is nonzero, else TC_UNSET).
TC_HD void tc_group_term(const TcParams& P, const TcDec* a, const TcDec* b, int bs, int g, int K,
                         tc_i64 fab, tc_i64 c_raw, tc_i64* total, tc_i64* base, tc_i64* align,
                         tc_i64* g_scale) {
  const int lo = g * (int)P.pg, hi = lo + (int)P.pg < K ? lo + (int)P.pg : K;
  tc_i64 g_raw;
  tc_group_sum(a, b, bs, lo, hi, fab, total, base, &g_raw, g_scale);
  *align = TC_UNSET;
  if (g_raw != TC_UNSET) {
    if (P.pw != TC_UNSET && g_raw - P.pw > *align) *align = g_raw - P.pw;
    if (P.sw != TC_UNSET && *g_scale - P.sw > *align) *align = *g_scale - P.sw;
  }
  if (P.pgcm && c_raw != TC_UNSET && g_raw != TC_UNSET && c_raw >= g_raw) {
    const tc_i64 x = c_raw - P.cmb;  // cut to raw(C) - c_merge_bits first
    if (x > *base) {
      *total = tc_cut_signed(*total, *base - x);
      *base = x;
    }
  }
}

// One instruction of an fp4 kind for one element of D (``acc``: C, f32).
template <int LC>
TC_HD tc_u32 tc_groups_step(const TcParams& P, tc_u32 acc, const TcDec* a, const TcDec* b,
                            int bs, int L_run) {
  const int K = LC > 0 ? LC : L_run;
  const TcStage st = P.out;
  const TcFields c = tc_fields((tc_i64)acc, st.spec);
  const tc_i64 clsb = c.raw - st.spec.frac_bits;
  const tc_i64 fab = P.a.frac_bits + P.b.frac_bits + 2 * P.scale.frac_bits;
  int flags = tc_term_flags(tc_lane_class(c.special, c.sig, st.spec), c.sign);
  bool have = false;
  tc_i64 big_r = TC_UNSET, big_s = TC_UNSET;
  for (int t = 0; t < K; ++t) {
    const int x = a[t].cls, y = b[t * bs].cls;
    const int cls = tc_mul_class(x & 3, y & 3);
    flags |= tc_term_flags(cls, ((x ^ y) >> 2) & 1);
    if (cls == 1) {
      const tc_i64 r = (tc_i64)a[t].exp + b[t * bs].exp, s = (tc_i64)a[t].pad + b[t * bs].pad;
      big_r = !have || r > big_r ? r : big_r;
      big_s = !have || s > big_s ? s : big_s;
      have = true;
    }
  }
  tc_i64 word;
  if (tc_specials_word(flags, st, &word)) return (tc_u32)word;
  const bool c_zero = !c.special && c.sig == 0;
  if (!have) return (c_zero && !P.c_keep) ? 0u : acc;  // zero_c 'positive' or 'keep'
  const bool c_nonzero = !c.special && c.sig != 0;
  const tc_i64 c_raw = c_nonzero ? c.raw : TC_UNSET;
  if (P.cdom && c_nonzero && c.raw >= big_r) {  // step 5: the C-dominant merge
    const tc_i64 q = c.raw - P.cmb;
    tc_i64 m = tc_cut(c.sig, clsb - q, c.sign);
    for (int lo = 0; lo < K; lo += (int)P.mg) {
      tc_i64 total, base, g_raw, g_scale;
      tc_group_sum(a, b, bs, lo, lo + (int)P.mg < K ? lo + (int)P.mg : K, fab, &total, &base,
                   &g_raw, &g_scale);
      m += tc_cut_signed(total, base - q);
    }
    return (tc_u32)tc_window_word(m, q, P, st);
  }
  const int groups = (int)((K + P.pg - 1) / P.pg);
  tc_i64 top = c_nonzero && P.cw != TC_UNSET ? c.raw - P.cw : TC_UNSET;
  for (int g = 0; g < groups; ++g) {  // steps 3-4: the quantum
    tc_i64 total, base, align, g_scale;
    tc_group_term(P, a, b, bs, g, K, fab, c_raw, &total, &base, &align, &g_scale);
    top = align > top ? align : top;
  }
  const tc_i64 q = top > P.qf ? top : P.qf;
  const tc_i64 mc = c_nonzero ? tc_cut(c.sig, clsb - q, c.sign) : 0;
  tc_i64 m = mc;
  for (int g = 0; g < groups; ++g) {
    tc_i64 total, base, align, g_scale;
    tc_group_term(P, a, b, bs, g, K, fab, c_raw, &total, &base, &align, &g_scale);
    m += tc_cut_signed(total, base - q);
  }
  word = tc_window_word(m, q, P, st);
  const tc_i64 mag = word & 0x7FFFFFFF;
  if (P.gf != TC_UNSET && mag != 0 && mag < ((tc_i64)1 << 23)) {  // step 6: the group floor
    const tc_i64 limit = q < P.gf ? P.gf - q : 0;
    m = mc;
    for (int g = 0; g < groups; ++g) {
      tc_i64 total, base, align, g_scale;
      tc_group_term(P, a, b, bs, g, K, fab, c_raw, &total, &base, &align, &g_scale);
      const tc_i64 units = tc_cut(total < 0 ? -total : total, base - q, 0);
      if (g_scale != TC_UNSET && g_scale < big_s && tc_bit_length(units) <= limit) continue;
      m += tc_cut_signed(total, base - q);
    }
    word = tc_window_word(m, q, P, st);
  }
  return (tc_u32)word;
}
