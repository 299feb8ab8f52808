// tcprobe harness: warpgroup wgmma.mma_async (sm_90a), m64n8kK.
//
// One tile per CTA of one warpgroup (128 threads). Per tile the host gives:
//   A: a_slots codes, B: b_slots codes, at shared-memory element offsets
//      (slot s is element s of the buffer; see tcprobe.layout), both read by
//      the instruction through matrix descriptors the host encodes (LBO, SBO,
//      swizzle; start address relative to the buffer, normally 0),
//   C: 128 threads x CR words, the accumulator registers of each thread
//      (f16 accumulators: two halves a word, the lower-numbered one low).
// The tile reads back D: 128 threads x CR registers, word = thread * CR + r.
// Dynamic shared memory: A's words, then B's words from a 128-byte boundary.
//
// The instantiation lines (TCP_WGMMA) are appended by tcprobe.kernels.catalog.

#include "tcprobe_common.cuh"

#define TCP_WGMMA_ASM_C4(PTX, TAIL)                                                        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"                               \
                 PTX " {%0,%1,%2,%3}, %4, %5, p" TAIL ";\n}\n"                             \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                          \
                 : "l"(da), "l"(db), "r"(1u) : "memory")

#define TCP_WGMMA_ASM_C2(PTX, TAIL)                                                        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                               \
                 PTX " {%0,%1}, %2, %3, p" TAIL ";\n}\n"                                   \
                 : "+r"(d[0]), "+r"(d[1])                                                  \
                 : "l"(da), "l"(db), "r"(1u) : "memory")

// NAME: kernel symbol; PTX: the instruction up to its operands; CR: D
// registers a thread (4: f32/s32, 2: f16); APACK/BPACK: TCP_PACK_* of the
// operands; TAIL: the immediates after scale-d (", 1, 1, 0, 0" for 16-bit
// inputs, ", 1, 1" for tf32 and fp8, "" for integers).
#define TCP_WGMMA(NAME, PTX, CR, APACK, BPACK, TAIL)                                       \
    extern "C" __global__ void __launch_bounds__(128) NAME(                                \
        const void* __restrict__ A, const void* __restrict__ B, const u32* __restrict__ C, \
        u32 a_slots, u32 b_slots, u64 adesc, u64 bdesc,                                    \
        const u32* __restrict__ pick, u32 npick, u32* __restrict__ out, u32 ntiles) {      \
        const u32 tile = blockIdx.x, tid = threadIdx.x;                                    \
        if (tile >= ntiles) return;                                                        \
        u32* sa = tcp_dyn_smem;                                                            \
        u32* sb = tcp_dyn_smem + tcp_b_offset_words(APACK, a_slots);                       \
        tcp_fill_smem(sa, A, APACK, a_slots, tile);                                        \
        tcp_fill_smem(sb, B, BPACK, b_slots, tile);                                        \
        u32 d[CR];                                                                         \
        _Pragma("unroll") for (u32 r = 0; r < CR; ++r) d[r] = C[((u64)tile * 128u + tid) * CR + r]; \
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                      \
        __syncthreads();                                                                   \
        const u64 da = tcp_desc_at(adesc, sa), db = tcp_desc_at(bdesc, sb);                \
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");                           \
        TCP_WGMMA_ASM_C##CR(PTX, TAIL);                                                    \
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");                    \
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");                    \
        __shared__ u32 stage[128 * CR];                                                    \
        _Pragma("unroll") for (u32 r = 0; r < CR; ++r) stage[tid * CR + r] = d[r];         \
        __syncthreads();                                                                   \
        tcp_emit(stage, 128u * CR, pick, npick, out, tile);                                \
    }

// wgmma.mma_async.sp at twice the dense K: A holds K/2 stored values a row,
// E one metadata register a thread, the sparsity selector 0. Built for
// sass-check; the CUDA device does not launch it yet (which thread's register
// holds which row's nibbles is unmeasured).
#define TCP_WGMMA_SP_ASM_C4(PTX, TAIL)                                                     \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %7, 0;\n"                              \
                 PTX " {%0,%1,%2,%3}, %4, %5, %6, 0, p" TAIL ";\n}\n"                      \
                 : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                          \
                 : "l"(da), "l"(db), "r"(e), "r"(1u) : "memory")

#define TCP_WGMMA_SP_ASM_C2(PTX, TAIL)                                                     \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\n"                              \
                 PTX " {%0,%1}, %2, %3, %4, 0, p" TAIL ";\n}\n"                            \
                 : "+r"(d[0]), "+r"(d[1])                                                  \
                 : "l"(da), "l"(db), "r"(e), "r"(1u) : "memory")

#define TCP_WGMMA_SP(NAME, PTX, CR, APACK, BPACK, TAIL)                                    \
    extern "C" __global__ void __launch_bounds__(128) NAME(                                \
        const void* __restrict__ A, const void* __restrict__ B, const u32* __restrict__ C, \
        const u32* __restrict__ E, u32 a_slots, u32 b_slots, u64 adesc, u64 bdesc,         \
        const u32* __restrict__ pick, u32 npick, u32* __restrict__ out, u32 ntiles) {      \
        const u32 tile = blockIdx.x, tid = threadIdx.x;                                    \
        if (tile >= ntiles) return;                                                        \
        u32* sa = tcp_dyn_smem;                                                            \
        u32* sb = tcp_dyn_smem + tcp_b_offset_words(APACK, a_slots);                       \
        tcp_fill_smem(sa, A, APACK, a_slots, tile);                                        \
        tcp_fill_smem(sb, B, BPACK, b_slots, tile);                                        \
        u32 d[CR];                                                                         \
        _Pragma("unroll") for (u32 r = 0; r < CR; ++r) d[r] = C[((u64)tile * 128u + tid) * CR + r]; \
        const u32 e = E[(u64)tile * 128u + tid];                                           \
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                      \
        __syncthreads();                                                                   \
        const u64 da = tcp_desc_at(adesc, sa), db = tcp_desc_at(bdesc, sb);                \
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");                           \
        TCP_WGMMA_SP_ASM_C##CR(PTX, TAIL);                                                 \
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");                    \
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");                    \
        __shared__ u32 stage[128 * CR];                                                    \
        _Pragma("unroll") for (u32 r = 0; r < CR; ++r) stage[tid * CR + r] = d[r];         \
        __syncthreads();                                                                   \
        tcp_emit(stage, 128u * CR, pick, npick, out, tile);                                \
    }

// ---- instantiations (appended by tcprobe.kernels.catalog) ----
