// tcprobe harness kernels: definitions shared by the three families.
//
// Compiled with NVRTC and no CUDA headers: only builtins and inline PTX.
// Every harness runs one tile per CTA, a whole batch per launch, and ends by
// emitting the words it read back (see tcp_emit).
//
// Operand codes arrive one per slot in a container array: u32 for 32-bit
// types (tf32), u16 for 16-bit types, u8 for 8-, 6- and 4-bit types (the
// code in the low bits). The harness places them: register-fragment slots
// (lane * E + e) for mma.sync, shared-memory element offsets for wgmma and
// tcgen05, where sub-byte types are packed by tcp_pack_word.

#pragma once

typedef unsigned int u32;
typedef unsigned long long u64;
typedef unsigned short u16;
typedef unsigned char u8;

// Shared-memory packing of operand slots (the smem families).
enum TcpPack : u32 {
    TCP_PACK_B32 = 0,      // one 32-bit element a word (tf32)
    TCP_PACK_B16 = 1,      // two 16-bit elements a word, slot 2w in the low half
    TCP_PACK_B8 = 2,       // four bytes a word, slot 4w in the low byte
    TCP_PACK_B6X16P32 = 3, // 16 six-bit codes in 12 bytes + 4 zero bytes, code j at bits 6j
    TCP_PACK_B4X16P64 = 4, // 16 four-bit codes in 8 bytes + 8 zero bytes, low nibble first
    TCP_PACK_B4 = 5,       // eight four-bit codes a word, low nibble first (mxf4, mxf4nvf4)
};

// Global container bytes of one slot under a packing.
__device__ __forceinline__ u32 tcp_container_bytes(u32 pack) {
    return pack == TCP_PACK_B32 ? 4u : (pack == TCP_PACK_B16 ? 2u : 1u);
}

// Slots one 32-bit shared-memory word spans (padding included).
__device__ __forceinline__ u32 tcp_slots_per_word(u32 pack) {
    switch (pack) {
    case TCP_PACK_B32: return 1u;
    case TCP_PACK_B16: return 2u;
    case TCP_PACK_B8: return 4u;
    case TCP_PACK_B6X16P32: return 4u;   // 16 slots in 16 bytes, as for bytes
    case TCP_PACK_B4X16P64: return 4u;
    default: return 8u;                  // TCP_PACK_B4
    }
}

template <typename T>
__device__ __forceinline__ u32 tcp_at(const void* base, u64 i, u64 end) {
    return i < end ? (u32)((const T*)base)[i] : 0u;
}

// The 32-bit shared-memory word w of one tile's operand buffer under packing
// PACK, assembled from the tile's slot codes (slots [off, end) of base).
template <u32 PACK>
__device__ __forceinline__ u32 tcp_pack_word(const void* base, u64 off, u64 end, u32 w) {
    if (PACK == TCP_PACK_B32) return tcp_at<u32>(base, off + w, end);
    if (PACK == TCP_PACK_B16) {
        const u64 s = off + 2ull * w;
        return (tcp_at<u16>(base, s, end) & 0xffffu) | (tcp_at<u16>(base, s + 1, end) << 16);
    }
    if (PACK == TCP_PACK_B8 || PACK == TCP_PACK_B4) {
        constexpr u32 PER = PACK == TCP_PACK_B8 ? 4u : 8u, BITS = 32u / PER, M = (1u << BITS) - 1u;
        u32 word = 0;
#pragma unroll
        for (u32 i = 0; i < PER; ++i) word |= (tcp_at<u8>(base, off + (u64)w * PER + i, end) & M) << (BITS * i);
        return word;
    }
    // 16 codes of BITS bits in the first 12 or 8 bytes of each 16-byte group.
    constexpr u32 BITS = PACK == TCP_PACK_B6X16P32 ? 6u : 4u, M = (1u << BITS) - 1u;
    const u32 q = w & 3u;
    const u64 g = off + 16ull * (w >> 2);
    u32 word = 0;
#pragma unroll
    for (u32 j = 0; j < 16u; ++j) {
        const int lo = (int)(BITS * j) - (int)(32u * q);  // bit position of code j in word q
        if (lo <= -(int)BITS || lo >= 32) continue;
        const u32 code = tcp_at<u8>(base, g + j, end) & M;
        word |= lo >= 0 ? (code << lo) : (code >> (-lo));
    }
    return word;
}

// Words a buffer of `slots` slots takes in shared memory.
__device__ __forceinline__ u32 tcp_words(u32 pack, u32 slots) {
    const u32 per = tcp_slots_per_word(pack);
    u32 words = (slots + per - 1u) / per;
    if (pack == TCP_PACK_B6X16P32 || pack == TCP_PACK_B4X16P64) words = (words + 3u) & ~3u;
    return words;
}

template <u32 PACK>
__device__ __noinline__ void tcp_fill_as(u32* dst, const void* src, u64 off, u64 end, u32 words) {
#pragma unroll 1
    for (u32 w = threadIdx.x; w < words; w += blockDim.x) dst[w] = tcp_pack_word<PACK>(src, off, end, w);
}

// Fill a shared-memory operand buffer of one tile (all threads of the CTA).
__device__ void tcp_fill_smem(u32* dst, const void* src, u32 pack, u32 slots, u32 tile) {
    const u32 words = tcp_words(pack, slots);
    const u64 off = (u64)tile * slots, end = off + slots;
    switch (pack) {
    case TCP_PACK_B32: tcp_fill_as<TCP_PACK_B32>(dst, src, off, end, words); break;
    case TCP_PACK_B16: tcp_fill_as<TCP_PACK_B16>(dst, src, off, end, words); break;
    case TCP_PACK_B8: tcp_fill_as<TCP_PACK_B8>(dst, src, off, end, words); break;
    case TCP_PACK_B6X16P32: tcp_fill_as<TCP_PACK_B6X16P32>(dst, src, off, end, words); break;
    case TCP_PACK_B4X16P64: tcp_fill_as<TCP_PACK_B4X16P64>(dst, src, off, end, words); break;
    default: tcp_fill_as<TCP_PACK_B4>(dst, src, off, end, words); break;
    }
}

// Dynamic shared memory of the smem families: A's words, then B's words from
// the next 128-byte boundary.
extern __shared__ __align__(1024) u32 tcp_dyn_smem[];

__device__ __forceinline__ u32 tcp_b_offset_words(u32 apack, u32 a_slots) {
    return (tcp_words(apack, a_slots) + 31u) & ~31u;
}

// The 32-bit shared-state-space address of a generic pointer to shared memory.
__device__ __forceinline__ u32 tcp_smem_addr(const void* p) {
    u32 a;
    asm volatile("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}

// Write back what a tile read: every word (npick == 0, raw mode) or only the
// words listed in pick (result mode: the slice that carries D).
__device__ void tcp_emit(const u32* stage, u32 nwords, const u32* pick, u32 npick, u32* out, u32 tile) {
    if (npick == 0) {
        for (u32 w = threadIdx.x; w < nwords; w += blockDim.x) out[(u64)tile * nwords + w] = stage[w];
    } else {
        for (u32 j = threadIdx.x; j < npick; j += blockDim.x) out[(u64)tile * npick + j] = stage[pick[j]];
    }
}

// A matrix descriptor whose start-address field (bits 0-13, address >> 4)
// is moved by the shared-memory address of buf: the host encodes every field
// with the start address relative to the buffer (normally 0).
__device__ __forceinline__ u64 tcp_desc_at(u64 desc, const void* buf) {
    return desc + (u64)((tcp_smem_addr(buf) >> 4) & 0x3fffu);
}

// The shared-memory image tcp_fill_smem builds, written out word by word:
// one tile's `slots` codes under `pack` (a check of the packing on a GPU).
extern "C" __global__ void __launch_bounds__(128) tcp_pack_probe(const void* src, u32 pack, u32 slots,
                                                                  u32* out) {
    u32* buf = tcp_dyn_smem;
    tcp_fill_smem(buf, src, pack, slots, 0);
    __syncthreads();
    const u32 words = tcp_words(pack, slots);
    for (u32 w = threadIdx.x; w < words; w += blockDim.x) out[w] = buf[w];
}
