// tcprobe harness: warp-level mma.sync (sm_75 and later).
//
// One tile per CTA of one warp. Per tile the host gives, as codes one a slot:
//   A: 32 lanes x EA slots (slot = lane * EA + e, e-th element of the lane's
//      A fragment, packed low element first into the 4 A registers),
//   B: 32 lanes x EB slots (2 B registers),
//   C: 32 lanes x CR words, the accumulator registers as the lane holds them
//      (f16 accumulators: two halves a word, the lower-numbered one low),
//   scales (block-scaled kinds only): one 32-bit scale register per lane for
//      A and for B; byte-id and thread-id selectors are 0.
// The tile reads back D: 32 lanes x CR registers, dump word = lane * CR + r.
//
// Operand containers: tf32 codes as u32, 16-bit codes as u16, 8/6/4-bit
// codes as u8. Under kind::f8f6f4 an fp6 code sits in bits 5:0 of its byte
// and an e2m1 code in bits 5:2 (the harness shifts it); under kind::mxf4 and
// kind::mxf4nvf4 e2m1 codes are packed two a byte, low nibble first.
//
// The instantiation lines (TCP_MMA_PLAIN / TCP_MMA_SCALED) are appended by
// tcprobe.kernels.catalog for the variants an architecture supports.

#include "tcprobe_common.cuh"

template <u32 BITS>
__device__ __forceinline__ u32 tcp_frag_code(const void* src, u64 i) {
    if (BITS == 32) return ((const u32*)src)[i];
    if (BITS == 16) return ((const u16*)src)[i];
    return ((const u8*)src)[i];
}

// Load the REGS fragment registers of this lane: element e of the lane sits
// in register e / PER at bits BITS * (e % PER), shifted left by SHIFT inside
// its field (e2m1 in an 8-bit container).
template <u32 BITS, u32 SHIFT, u32 REGS>
__device__ __forceinline__ void tcp_frag(const void* src, u32 tile, u32 lane, u32* r) {
    constexpr u32 PER = 32u / BITS;
    constexpr u32 E = PER * REGS;
    constexpr u32 MASK = BITS == 32 ? 0xffffffffu : ((1u << BITS) - 1u);
    const u64 base = ((u64)tile * 32u + lane) * E;
#pragma unroll
    for (u32 i = 0; i < REGS; ++i) {
        u32 v = 0;
#pragma unroll
        for (u32 j = 0; j < PER; ++j) v |= ((tcp_frag_code<BITS>(src, base + i * PER + j) << SHIFT) & MASK) << (BITS * j);
        r[i] = v;
    }
}

// The body shared by every variant; MMA_STATEMENT issues the instruction on
// a[AR], b[BR], d[CR] (and sfa, sfb for the scaled form). AR = 4, BR = 2 for
// m16n8k16 and up; m16n8k8 f16 (sm_75) has AR = 2, BR = 1.
#define TCP_MMA_BODY_R(AR, BR, CR, ABITS, ASHIFT, BBITS, BSHIFT, MMA_STATEMENT)           \
    const u32 tile = blockIdx.x, lane = threadIdx.x;                                      \
    if (tile >= ntiles) return;                                                           \
    u32 a[AR], b[BR], d[CR];                                                              \
    tcp_frag<ABITS, ASHIFT, AR>(A, tile, lane, a);                                        \
    tcp_frag<BBITS, BSHIFT, BR>(B, tile, lane, b);                                        \
    _Pragma("unroll") for (u32 r = 0; r < CR; ++r) d[r] = C[((u64)tile * 32u + lane) * CR + r]; \
    const u32 sfa = SA ? SA[(u64)tile * 32u + lane] : 0u;                                 \
    const u32 sfb = SB ? SB[(u64)tile * 32u + lane] : 0u;                                 \
    (void)sfa; (void)sfb;                                                                 \
    MMA_STATEMENT;                                                                        \
    __shared__ u32 stage[32 * CR];                                                        \
    _Pragma("unroll") for (u32 r = 0; r < CR; ++r) stage[lane * CR + r] = d[r];           \
    __syncwarp();                                                                         \
    tcp_emit(stage, 32u * CR, pick, npick, out, tile);

#define TCP_MMA_BODY(CR, ABITS, ASHIFT, BBITS, BSHIFT, MMA_STATEMENT)                     \
    TCP_MMA_BODY_R(4, 2, CR, ABITS, ASHIFT, BBITS, BSHIFT, MMA_STATEMENT)

#define TCP_MMA_PARAMS                                                                    \
    const void* __restrict__ A, const void* __restrict__ B, const u32* __restrict__ C,    \
    const u32* __restrict__ SA, const u32* __restrict__ SB,                               \
    const u32* __restrict__ pick, u32 npick, u32* __restrict__ out, u32 ntiles

#define TCP_ASM_C4(PTX)                                                                   \
    asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"             \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                         \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

#define TCP_ASM_C2(PTX)                                                                   \
    asm volatile(PTX " {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%0,%1};"                         \
                 : "+r"(d[0]), "+r"(d[1])                                                 \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))

// m16n8k8 with 16-bit inputs: two A registers, one B register.
#define TCP_ASM_K8_C4(PTX)                                                                \
    asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"                      \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                         \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]))

#define TCP_ASM_K8_C2(PTX)                                                                \
    asm volatile(PTX " {%0,%1}, {%2,%3}, {%4}, {%0,%1};"                                  \
                 : "+r"(d[0]), "+r"(d[1])                                                 \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]))

// m8n8k4 (Volta's shape, sm_75 here): two A and two B registers a lane; 8
// f32 accumulators (CR = 8) or 4 registers of f16 pairs (CR = 4).
#define TCP_ASM_M884_C8(PTX)                                                              \
    asm volatile(PTX " {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, {%0,%1,%2,%3,%4,%5,%6,%7};" \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]),                        \
                   "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7])                         \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]))

#define TCP_ASM_M884_C4(PTX)                                                              \
    asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%0,%1,%2,%3};"                   \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                         \
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]))

#define TCP_ASM_C4_SCALED(PTX)                                                            \
    do {                                                                                  \
        const u16 zero = 0;                                                               \
        asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3},"         \
                         " {%10}, {%11,%12}, {%13}, {%14,%15};"                           \
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                     \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]),  \
                       "r"(sfa), "h"(zero), "h"(zero), "r"(sfb), "h"(zero), "h"(zero));   \
    } while (0)

// A plain variant: f32/s32 accumulators (CR = 4) or f16 accumulators (CR = 2).
#define TCP_MMA_PLAIN(NAME, PTX, CR, ABITS, ASHIFT, BBITS, BSHIFT)                        \
    extern "C" __global__ void __launch_bounds__(32) NAME(TCP_MMA_PARAMS) {               \
        TCP_MMA_BODY(CR, ABITS, ASHIFT, BBITS, BSHIFT, TCP_ASM_C##CR(PTX))                \
    }

// m16n8k8 with 16-bit inputs (sm_75 and later): CR = 4 (f32) or 2 (f16).
#define TCP_MMA_PLAIN_K8(NAME, PTX, CR, ABITS, ASHIFT, BBITS, BSHIFT)                     \
    extern "C" __global__ void __launch_bounds__(32) NAME(TCP_MMA_PARAMS) {               \
        TCP_MMA_BODY_R(2, 1, CR, ABITS, ASHIFT, BBITS, BSHIFT, TCP_ASM_K8_C##CR(PTX))     \
    }

// m8n8k4 with f16 inputs: CR = 8 (f32) or 4 (f16).
#define TCP_MMA_PLAIN_M884(NAME, PTX, CR, ABITS, ASHIFT, BBITS, BSHIFT)                   \
    extern "C" __global__ void __launch_bounds__(32) NAME(TCP_MMA_PARAMS) {               \
        TCP_MMA_BODY_R(2, 2, CR, ABITS, ASHIFT, BBITS, BSHIFT, TCP_ASM_M884_C##CR(PTX))   \
    }

// A block-scaled variant (sm_120a): f32 accumulators, one scale register a lane.
#define TCP_MMA_SCALED(NAME, PTX, ABITS, ASHIFT, BBITS, BSHIFT)                           \
    extern "C" __global__ void __launch_bounds__(32) NAME(TCP_MMA_PARAMS) {               \
        TCP_MMA_BODY(4, ABITS, ASHIFT, BBITS, BSHIFT, TCP_ASM_C4_SCALED(PTX))             \
    }

// A sparse variant (mma.sp, mma.sp::ordered_metadata) at its largest K: A holds
// the K/2 stored values in 4 registers, B its K values in 4; E gives each
// lane's metadata register (the sparsity selector is 0: all four threads of
// a group hold metadata). Built for sass-check; the CUDA device does not
// launch it yet (which lane's register holds which row's nibbles is unmeasured).
#define TCP_MMA_SP_BODY(CR, ABITS, BBITS, MMA_STATEMENT)                                   \
    const u32 tile = blockIdx.x, lane = threadIdx.x;                                      \
    if (tile >= ntiles) return;                                                           \
    u32 a[4], b[4], d[CR];                                                                \
    tcp_frag<ABITS, 0, 4>(A, tile, lane, a);                                              \
    tcp_frag<BBITS, 0, 4>(B, tile, lane, b);                                              \
    _Pragma("unroll") for (u32 r = 0; r < CR; ++r) d[r] = C[((u64)tile * 32u + lane) * CR + r]; \
    const u32 e = E[(u64)tile * 32u + lane];                                              \
    MMA_STATEMENT;                                                                        \
    __shared__ u32 stage[32 * CR];                                                        \
    _Pragma("unroll") for (u32 r = 0; r < CR; ++r) stage[lane * CR + r] = d[r];           \
    __syncwarp();                                                                         \
    tcp_emit(stage, 32u * CR, pick, npick, out, tile);

#define TCP_MMA_SP_PARAMS                                                                 \
    const void* __restrict__ A, const void* __restrict__ B, const u32* __restrict__ C,    \
    const u32* __restrict__ E, const u32* __restrict__ pick, u32 npick,                   \
    u32* __restrict__ out, u32 ntiles

#define TCP_ASM_SP_C4(PTX)                                                                \
    asm volatile(PTX " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9,%10,%11}, {%0,%1,%2,%3}, %12, 0x0;" \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                         \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),                            \
                   "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e))

#define TCP_ASM_SP_C2(PTX)                                                                \
    asm volatile(PTX " {%0,%1}, {%2,%3,%4,%5}, {%6,%7,%8,%9}, {%0,%1}, %10, 0x0;"         \
                 : "+r"(d[0]), "+r"(d[1])                                                 \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]),                            \
                   "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e))

#define TCP_MMA_SPARSE(NAME, PTX, CR, ABITS, BBITS)                                       \
    extern "C" __global__ void __launch_bounds__(32) NAME(TCP_MMA_SP_PARAMS) {            \
        TCP_MMA_SP_BODY(CR, ABITS, BBITS, TCP_ASM_SP_C##CR(PTX))                          \
    }

// ---- instantiations (appended by tcprobe.kernels.catalog) ----
