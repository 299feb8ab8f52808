// The fixed-point GEMM chain of tcprobe's engine: one source for a CUDA
// kernel (NVRTC) and for a host build (g++ -x c++), which runs the very same
// tile code with the CTA's threads as loops (the tests compare its words with
// models/gemm.py's on the CPU; see docs/cuda-backend.md).
//
// D (M x N) = the chain over blocks blk_lo .. blk_hi of L products of A
// (M x K, row-major words) and B (K x N, row-major words) from C (M x N):
// one thread per element of D, a CTA of TC_TILE x TC_TILE threads; for each
// block the CTA decodes A's TC_TILE rows and B's TC_TILE columns of the block
// once into shared memory, then each thread runs tc_block_step on its row and
// column. Blocks chain: a block's word is the next one's addend. The integer
// kinds (P.int_mode) run the same tile with tc_int_step: each thread's
// accumulator is then C's s32 value and the exact sum, in an int64. Block
// scales (P.scale_block > 0): SA (M x K / scale_block) and SB (N x K /
// scale_block) words, each folded into its elements as they are decoded.
// Sparse A: ACT (M x K bytes, 0 where the metadata leaves a position out) or
// NULL; a left-out position is a zero that sets no flag (TC_MASKED).
// AMD v_mfma designs (P.amd, kernels/tc_gemm_amd.cuh: one block is one
// instruction, tc_amd_step) and the chain with no window (exact sums,
// kernels/tc_gemm_exact.cuh: tc_exact_step) run the same tile as their own
// kernel, tc_gemm_wide, so that the chain's kernel keeps its registers and no
// local memory (their limbs live there).
#include "tc_gemm_core.cuh"
#include "tc_gemm_groups.cuh"
#include "tc_gemm_exact.cuh"
#include "tc_gemm_amd.cuh"

#define TC_TILE 16
#define TC_MAXL 64  // the largest block L the tile holds (cuda_params refuses more)

#if defined(__CUDACC__)
#define TC_SHARED __shared__
#define TC_LOCAL 1
#define TC_THREADS(ty, tx, tid) \
  {                             \
    const int ty = threadIdx.y; \
    const int tx = threadIdx.x; \
    const int tid = 0;          \
    (void)tid;
#define TC_THREADS_END }
#define TC_SYNC() __syncthreads()
#define TC_TILE_FN __device__ __forceinline__
#else
#define TC_SHARED
#define TC_LOCAL (TC_TILE * TC_TILE)
#define TC_THREADS(ty, tx, tid)                 \
  for (int ty = 0; ty < TC_TILE; ++ty)          \
    for (int tx = 0; tx < TC_TILE; ++tx) {      \
      const int tid = ty * TC_TILE + tx;        \
      (void)tid;
#define TC_THREADS_END }
#define TC_SYNC() ((void)0)
#define TC_TILE_FN inline
#endif

// One CTA (bx: columns of D, by: rows of D). ``A``..``D`` are words as the
// caller lays them out; words past M, N read as zeros and are never written.
// WIDE: tc_gemm_wide's tile (the AMD designs, exact sums); else tc_gemm_chain's.
template <bool WIDE>
TC_TILE_FN void tc_gemm_tile(const TcParams& P, const tc_u32* A, const tc_u32* B,
                             const tc_u32* C, tc_u32* D, const tc_u32* SA, const tc_u32* SB,
                             const unsigned char* ACT, tc_i64 M, tc_i64 N, tc_i64 K,
                             tc_i64 blk_lo, tc_i64 blk_hi, tc_i64 bx, tc_i64 by) {
  TC_SHARED TcDec sa[TC_TILE][TC_MAXL];
  TC_SHARED TcDec sb[TC_MAXL][TC_TILE];
  tc_i64 acc[TC_LOCAL];  // a word of D's format, or an integer kind's exact sum
  tc_u32 cw[TC_LOCAL];   // c_last: the instruction's C, added after its blocks
  const int L = (int)P.block;
  const bool integer = P.int_mode != 0;
  const tc_i64 sbk = P.scale_block, nsc = sbk > 0 ? K / sbk : 0;
  TC_THREADS(ty, tx, tid)
    const tc_i64 i = by * TC_TILE + ty, j = bx * TC_TILE + tx;
    const tc_u32 w = (i < M && j < N) ? C[i * N + j] : 0u;
    acc[tid] = integer ? (tc_i64)(int)w : (tc_i64)w;
  TC_THREADS_END
  for (tc_i64 blk = blk_lo; blk < blk_hi; ++blk) {
    const tc_i64 k0 = blk * L;
    TC_THREADS(ty, tx, tid)
      const tc_i64 i = by * TC_TILE + ty, j = bx * TC_TILE + tx;
      for (int t = tx; t < L; t += TC_TILE) {
        const tc_i64 w = i < M ? (tc_i64)A[i * K + k0 + t] : 0;
        const tc_i64 u = P.unpack ? tc_convert_word(w, P.ua, P.a, P.u_nan) : w;
        TcDec d = (WIDE && P.amd) ? tc_amd_decode(w, P.a, P.a_conv)
                      : tc_decode(tc_convert_input(u, P.a, P.a_conv), P.a);
        if (sbk > 0 && i < M) d = tc_scaled(d, SA[i * nsc + (k0 + t) / sbk], P.scale);
        if (ACT && i < M && !ACT[i * K + k0 + t]) {
          d.sig = 0;
          d.exp = (short)TC_ZERO_EXP;
          d.cls = TC_MASKED;
        }
        sa[ty][t] = d;
      }
      for (int t = ty; t < L; t += TC_TILE) {
        const tc_i64 w = j < N ? (tc_i64)B[(k0 + t) * N + j] : 0;
        const tc_i64 u = P.unpack ? tc_convert_word(w, P.ub, P.b, P.u_nan) : w;
        TcDec d = (WIDE && P.amd) ? tc_amd_decode(w, P.b, P.b_conv)
                      : tc_decode(tc_convert_input(u, P.b, P.b_conv), P.b);
        if (sbk > 0 && j < N) d = tc_scaled(d, SB[j * nsc + (k0 + t) / sbk], P.scale);
        sb[t][tx] = d;
      }
    TC_THREADS_END
    TC_SYNC();
    const bool starts = blk % P.per_instr == 0, ends = (blk + 1) % P.per_instr == 0;
    const tc_i64 cev = P.c_every > 0 ? P.c_every : P.per_instr;  // blocks from one C to the next
    const bool c_starts = blk % cev == 0, c_ends = (blk + 1) % cev == 0;
    TC_THREADS(ty, tx, tid)
      const TcDec* ar = sa[ty];
      const TcDec* bc = &sb[0][tx];
      if (WIDE && P.amd) {  // one block is the instruction
        acc[tid] = tc_amd_step(P, (tc_u32)acc[tid], ar, bc, TC_TILE, L);
      } else if (!WIDE && P.grp_mode) {  // an fp4 kind: one block is the instruction
        // K at run time: unrolling the group passes costs NVRTC minutes, not the product
        acc[tid] = tc_groups_step<0>(P, (tc_u32)acc[tid], ar, bc, TC_TILE, L);
      } else if (!WIDE && integer) {  // (no `continue`: in the CUDA build this is no loop)
        switch (L) {
          case 16: acc[tid] = tc_int_step<16>(P, acc[tid], ends, ar, bc, TC_TILE, L); break;
          case 32: acc[tid] = tc_int_step<32>(P, acc[tid], ends, ar, bc, TC_TILE, L); break;
          default: acc[tid] = tc_int_step<0>(P, acc[tid], ends, ar, bc, TC_TILE, L);
        }
      } else {
        tc_u32 word = (tc_u32)acc[tid];
        if (c_starts && P.c_conv) word = (tc_u32)tc_convert_word(word, P.c, P.cc, P.cc_nan);
        if (c_starts && P.c_last) cw[tid] = word;
        if (c_starts && P.c_last == 2) word = 0;  // a split model's first sub-MMA: from +0
        if (WIDE) {  // no window: an exact sum
          acc[tid] = tc_exact_step(P, word, starts, ends, ar, bc, TC_TILE, L);
        } else switch (L) {  // the profiles' block sizes as constants; any other L at run time
          case 4: acc[tid] = tc_block_step<4>(P, word, starts, ends, ar, bc, TC_TILE, L); break;
          case 8: acc[tid] = tc_block_step<8>(P, word, starts, ends, ar, bc, TC_TILE, L); break;
          case 16: acc[tid] = tc_block_step<16>(P, word, starts, ends, ar, bc, TC_TILE, L); break;
          case 32: acc[tid] = tc_block_step<32>(P, word, starts, ends, ar, bc, TC_TILE, L); break;
          default: acc[tid] = tc_block_step<0>(P, word, starts, ends, ar, bc, TC_TILE, L);
        }
        if (c_ends && P.c_last) acc[tid] = tc_c_last_word(P, acc[tid], cw[tid]);
      }
    TC_THREADS_END
    TC_SYNC();
  }
  TC_THREADS(ty, tx, tid)
    const tc_i64 i = by * TC_TILE + ty, j = bx * TC_TILE + tx;
    if (i < M && j < N) D[i * N + j] = (tc_u32)acc[tid];
  TC_THREADS_END
}

#if defined(__CUDACC__)
// The kernel: grid (ceil(N / TC_TILE), ceil(M / TC_TILE)), block (TC_TILE, TC_TILE).
extern "C" __global__ void __launch_bounds__(TC_TILE * TC_TILE)
tc_gemm_chain(TcParams P, const tc_u32* A, const tc_u32* B, const tc_u32* C, tc_u32* D,
              const tc_u32* SA, const tc_u32* SB, const unsigned char* ACT, tc_i64 M,
              tc_i64 N, tc_i64 K, tc_i64 blk_lo, tc_i64 blk_hi) {
  tc_gemm_tile<false>(P, A, B, C, D, SA, SB, ACT, M, N, K, blk_lo, blk_hi, blockIdx.x,
                      blockIdx.y);
}

// The AMD designs' and exact sums' kernel: the same grid, P.amd set or P.window < 0.
extern "C" __global__ void __launch_bounds__(TC_TILE * TC_TILE)
tc_gemm_wide(TcParams P, const tc_u32* A, const tc_u32* B, const tc_u32* C, tc_u32* D,
            const tc_u32* SA, const tc_u32* SB, const unsigned char* ACT, tc_i64 M, tc_i64 N,
            tc_i64 K, tc_i64 blk_lo, tc_i64 blk_hi) {
  tc_gemm_tile<true>(P, A, B, C, D, SA, SB, ACT, M, N, K, blk_lo, blk_hi, blockIdx.x,
                     blockIdx.y);
}
#else
#include <cstring>
// The host build: every CTA of the grid in turn, rows of CTAs split by the
// caller (row_lo .. row_hi of the grid's rows) so that it may run threads.
extern "C" int tc_gemm_host(const tc_i64* params, tc_i64 nparams, const tc_u32* A,
                            const tc_u32* B, const tc_u32* C, tc_u32* D, const tc_u32* SA,
                            const tc_u32* SB, const unsigned char* ACT, tc_i64 M, tc_i64 N,
                            tc_i64 K, tc_i64 blk_lo, tc_i64 blk_hi, tc_i64 row_lo,
                            tc_i64 row_hi) {
  if (nparams * (tc_i64)sizeof(tc_i64) != (tc_i64)sizeof(TcParams)) return 1;
  TcParams P;
  std::memcpy(&P, params, sizeof(TcParams));
  if (P.block < 1 || P.block > TC_MAXL) return 2;
  if (P.scale_block < 0 || (P.scale_block > 0 && (!SA || !SB || K % P.scale_block))) return 3;
  if (P.grp_mode && (P.pg < 1 || P.mg < 1 || P.per_instr != 1)) return 4;
  if (P.amd && (P.amd < 1 || P.amd > 5 || P.amd_l < 1 || P.per_instr != 1 || SA || ACT ||
                P.amd_f2 + 1 < P.window ||
                (P.amd == 3 && ((P.amd_l != 2 && P.amd_l != 4) || P.block % P.amd_l))))
    return 5;
  const tc_i64 gx = (N + TC_TILE - 1) / TC_TILE;
  for (tc_i64 by = row_lo; by < row_hi; ++by)
    for (tc_i64 bx = 0; bx < gx; ++bx)
      if (P.amd || P.window < 0) tc_gemm_tile<true>(P, A, B, C, D, SA, SB, ACT, M, N, K, blk_lo, blk_hi, bx, by);
      else tc_gemm_tile<false>(P, A, B, C, D, SA, SB, ACT, M, N, K, blk_lo, blk_hi, bx, by);
  return 0;
}

extern "C" tc_i64 tc_gemm_params_size() { return (tc_i64)(sizeof(TcParams) / sizeof(tc_i64)); }
#endif
