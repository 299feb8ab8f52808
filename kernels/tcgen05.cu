// tcprobe harness: tcgen05.mma (sm_100a, sm_103a), cta_group::1.
//
// One tile per CTA of 128 threads (four warps, one per 32-lane sub-partition
// of tensor memory). Per tile the host gives:
//   A: a_slots codes, B: b_slots codes, at shared-memory element offsets,
//      packed by apack / bpack (TCP_PACK_*: fp6 and fp4 under kind::f8f6f4 in
//      the 16-in-16-byte padded forms, e2m1 under kind::mxf4* two a byte), read
//      through the matrix descriptors adesc / bdesc (start address relative
//      to the buffer, normally 0; every other field from the host),
//   idesc: the instruction descriptor (types, M, N, sparsity, scale ids),
//   C: 128 lanes x 8 tensor-memory words, written with tcgen05.st.32x32b
//      at columns 0-7 (word = lane * 8 + column),
//   meta (sparse variants): 128 lanes x 2 words at columns 32-33,
//   scale_a / scale_b (block-scaled variants): 128 lanes x 4 words each at
//      columns 64-67 and 96-99 (word = lane * 4 + column). Scale A of an
//      M=128 tile: column i of lane l holds row 32i + l, replicated in every
//      warp's 32 lanes; scale B of N=8: column 0 of lane l holds column l % 8
//      (the layout of MMA-Sim's B200-tested kernels). One byte a scale.
// Each operand region starts on a 32-column boundary of one 128-column
// allocation, as a tcgen05.alloc of its own would (MMA-Sim allocates D, scale
// A and scale B apart); tcprobe/tiles/tmem.py holds the same map.
// The tile reads back columns 0-7 of all 128 lanes with tcgen05.ld.32x32b:
// dump word = lane * 8 + column. Which words carry D (M=64 uses part of the
// lanes; f16 D sits in the low half of each word) is the ladder's slice step.
//
// The instantiation lines (TCP_TC05_*) are appended by tcprobe.kernels.catalog.

#include "tcprobe_common.cuh"

#define TCP_TC05_NCOLS 128u  // allocated tensor-memory columns
#define TCP_TC05_DCOLS 8     // C / D words a lane
#define TCP_TC05_META_COL 32u
#define TCP_TC05_META_COLS 2 // metadata words a lane
#define TCP_TC05_SFA_COL 64u
#define TCP_TC05_SFB_COL 96u
#define TCP_TC05_SCALE_COLS 4 // scale words a lane, each operand

__device__ __forceinline__ void tcp_tmem_st8(u32 taddr, const u32* v) {
    asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1,%2,%3,%4,%5,%6,%7,%8};"
                 :: "r"(taddr), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]), "r"(v[4]), "r"(v[5]),
                    "r"(v[6]), "r"(v[7]) : "memory");
}

__device__ __forceinline__ void tcp_tmem_st2(u32 taddr, u32 v0, u32 v1) {
    asm volatile("tcgen05.st.sync.aligned.32x32b.x2.b32 [%0], {%1,%2};"
                 :: "r"(taddr), "r"(v0), "r"(v1) : "memory");
}

__device__ __forceinline__ void tcp_tmem_st4(u32 taddr, const u32* v) {
    asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {%1,%2,%3,%4};"
                 :: "r"(taddr), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]) : "memory");
}

__device__ __forceinline__ void tcp_tmem_ld8(u32 taddr, u32* v) {
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8];"
                 : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]),
                   "=r"(v[6]), "=r"(v[7]) : "r"(taddr) : "memory");
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void tcp_tc05_sync() {
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

__device__ __forceinline__ void tcp_mbar_wait(u32 mbar, u32 phase) {
    u32 done = 0;
    while (!done) {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(mbar), "r"(phase) : "memory");
    }
}

// The four instruction forms; tm: tensor-memory base of the allocation.
#define TCP_TC05_DENSE(PTX)                                                               \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n" PTX " [%0], %1, %2, %3, p;\n}\n" \
                 :: "r"(tm), "l"(da), "l"(db), "r"(idesc), "r"(1u) : "memory")
#define TCP_TC05_SPARSE(PTX)                                                              \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %5, 0;\n" PTX " [%0], %1, %2, [%3], %4, p;\n}\n" \
                 :: "r"(tm), "l"(da), "l"(db), "r"(tm + TCP_TC05_META_COL), "r"(idesc), "r"(1u) : "memory")
#define TCP_TC05_SCALED(PTX)                                                              \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n" PTX " [%0], %1, %2, %3, [%4], [%5], p;\n}\n" \
                 :: "r"(tm), "l"(da), "l"(db), "r"(idesc), "r"(tm + TCP_TC05_SFA_COL),    \
                    "r"(tm + TCP_TC05_SFB_COL), "r"(1u) : "memory")
#define TCP_TC05_SCALED_SPARSE(PTX)                                                       \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %7, 0;\n" PTX                          \
                 " [%0], %1, %2, [%3], %4, [%5], [%6], p;\n}\n"                           \
                 :: "r"(tm), "l"(da), "l"(db), "r"(tm + TCP_TC05_META_COL), "r"(idesc),   \
                    "r"(tm + TCP_TC05_SFA_COL), "r"(tm + TCP_TC05_SFB_COL), "r"(1u) : "memory")

// NAME: kernel symbol; PTX: the instruction up to its operands; FORM: one of
// DENSE, SPARSE, SCALED, SCALED_SPARSE.
#define TCP_TC05(NAME, PTX, FORM)                                                          \
    extern "C" __global__ void __launch_bounds__(128) NAME(                                \
        const void* __restrict__ A, const void* __restrict__ B, const u32* __restrict__ C, \
        const u32* __restrict__ META, const u32* __restrict__ SA, const u32* __restrict__ SB, \
        u32 a_slots, u32 b_slots, u32 apack, u32 bpack, u64 adesc, u64 bdesc, u32 idesc,   \
        const u32* __restrict__ pick, u32 npick, u32* __restrict__ out, u32 ntiles) {      \
        const u32 tile = blockIdx.x, tid = threadIdx.x, warp = tid >> 5;                   \
        if (tile >= ntiles) return;                                                        \
        __shared__ u32 tmem_base;                                                          \
        __shared__ __align__(8) u64 mbar;                                                  \
        __shared__ u32 stage[128 * TCP_TC05_DCOLS];                                        \
        const u32 mbar_addr = tcp_smem_addr(&mbar);                                        \
        if (warp == 0) {                                                                   \
            asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" \
                         :: "r"(tcp_smem_addr(&tmem_base)), "r"(TCP_TC05_NCOLS) : "memory"); \
            asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory"); \
        }                                                                                  \
        if (tid == 0) {                                                                    \
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(mbar_addr) : "memory"); \
            asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");            \
        }                                                                                  \
        u32* sa = tcp_dyn_smem;                                                            \
        u32* sb = tcp_dyn_smem + tcp_b_offset_words(apack, a_slots);                       \
        tcp_fill_smem(sa, A, apack, a_slots, tile);                                        \
        tcp_fill_smem(sb, B, bpack, b_slots, tile);                                        \
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");                      \
        tcp_tc05_sync();                                                                   \
        const u32 tm = tmem_base;                                                          \
        const u32 lane_addr = tm + ((warp * 32u) << 16);                                   \
        {                                                                                  \
            u32 v[TCP_TC05_DCOLS];                                                         \
            const u64 row = (u64)tile * 128u + tid;                                        \
            _Pragma("unroll") for (u32 j = 0; j < TCP_TC05_DCOLS; ++j) v[j] = C[row * TCP_TC05_DCOLS + j]; \
            tcp_tmem_st8(lane_addr, v);                                                    \
            if (META) tcp_tmem_st2(lane_addr + TCP_TC05_META_COL, META[row * TCP_TC05_META_COLS], \
                                   META[row * TCP_TC05_META_COLS + 1u]);                  \
            if (SA) tcp_tmem_st4(lane_addr + TCP_TC05_SFA_COL, SA + row * TCP_TC05_SCALE_COLS); \
            if (SB) tcp_tmem_st4(lane_addr + TCP_TC05_SFB_COL, SB + row * TCP_TC05_SCALE_COLS); \
            asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");                  \
        }                                                                                  \
        tcp_tc05_sync();                                                                   \
        if (tid == 0) {                                                                    \
            const u64 da = tcp_desc_at(adesc, sa), db = tcp_desc_at(bdesc, sb);            \
            TCP_TC05_##FORM(PTX);                                                          \
            asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" \
                         :: "r"(mbar_addr) : "memory");                                    \
        }                                                                                  \
        tcp_mbar_wait(mbar_addr, 0u);                                                      \
        asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");                   \
        {                                                                                  \
            u32 v[TCP_TC05_DCOLS];                                                         \
            tcp_tmem_ld8(lane_addr, v);                                                    \
            _Pragma("unroll") for (u32 j = 0; j < TCP_TC05_DCOLS; ++j) stage[tid * TCP_TC05_DCOLS + j] = v[j]; \
        }                                                                                  \
        tcp_tc05_sync();                                                                   \
        if (warp == 0) {                                                                   \
            asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;"           \
                         :: "r"(tm), "r"(TCP_TC05_NCOLS) : "memory");                      \
        }                                                                                  \
        tcp_emit(stage, 128u * TCP_TC05_DCOLS, pick, npick, out, tile);                   \
    }

// ---- instantiations (appended by tcprobe.kernels.catalog) ----
