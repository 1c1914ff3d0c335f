/* attention_wgmma_tma.cl - the prefill path on the warpgroup tensor cores
 * of compute capability 9.0 (wgmma; f16, bf16; head dims 64, 80, 96,
 * 128 and 256), its tiles loaded by the tensor memory accelerator
 * (wg_tma): a work-group per block of MMA_Q query rows of one (batch, kv
 * head), a warpgroup per 64 of them, over every key tile its rows see.
 *
 * Per tile of WG_KEYS keys, as attention_mma_common.cl does it on
 * m16n8k16 products: S = Q K^T as m64n(WG_KEYS)k16 products with Q and K
 * both read by wgmma from local memory, the online softmax on S where
 * the products leave it (the accumulators of a warp lie as mma.sync's
 * do, so that am_scale_mask and am_probabilities serve both), then O +=
 * P V as m64n(HEAD_DIM)k16 products with P rounded to the storage type in
 * registers (wgmma's A operand) and V read from local memory. The
 * products of a tile's scores and of the tile before's O += P V are in
 * flight together, so that the softmax of one runs beside the other; and
 * the warpgroups take turns to start their products, so that one's
 * softmax runs while the other's products do.
 *
 * The first work-item of the last warpgroup, the loader, writes tensor
 * maps of K and V (a slot of the scratch per compute unit, the words the
 * same in every work-group) and loads each tile by the tensor memory
 * accelerator into one of two K and two V buffers, once every warp has
 * done with the tile two before: the last warpgroup to start its
 * products is the last to finish them, so the loader seldom waits.
 * mbarriers say when a buffer is full (by bytes) and when every warp has
 * done with it; no work-group barrier after Q's copy. (A warp of its own
 * for the loads costs a whole warpgroup's registers: ptxas allots them
 * by warpgroups.)
 *
 * Local memory: the block's Q rows, then two K tiles and two V tiles.
 * Each is rows of HEAD_DIM elements cut into blocks of 64 (128 bytes a
 * row), whose 16-byte chunks are XOR-swizzled by the row as wgmma's
 * 128-byte swizzle reads them (and the accelerator writes them): Q and K
 * as K-major operands (the head the reduction), V as an N-major one (the
 * head the product's columns).
 *
 * Its wgmma instructions reach the device through the stub's sm_90a
 * rebuild (wgmma_ptx.cl); the plan gives this kernel only to the variant
 * for compute capability 9.0.
 *
 * Launch: local (2 * MMA_Q, 1); groups as attention_mma.cl's. */
#include "attention_mma_common.cl"
#include "attention_wgmma_tiles.cl"
#include "attention_tma_tiles.cl"

#define AW_ROOM (AW_Q_ROOM + 4 * AW_KV_ROOM) /* Q, K, K, V, V */
#define AW_GROUPS (MMA_Q / 64)               /* multiplying warpgroups */
#define AW_LOADER ((AW_GROUPS - 1) * 128)    /* the loader's tid */

/* The warpgroups start their products in turn, G after G - 1: named
 * barrier 1 + G is G's turn, which the warpgroup before gives
 * (bar.arrive) and G waits for (bar.sync), 128 work-items each. */
inline void aw_turn_wait(uint g)
{
    if (AW_GROUPS > 1) {
        asm volatile("bar.sync %0, 256;" ::"r"(1 + g) : "memory");
    }
}
inline void aw_turn_give(uint g)
{
    if (AW_GROUPS > 1) {
        asm volatile("bar.arrive %0, 256;" ::"r"(1 + (g + 1) % AW_GROUPS)
                     : "memory");
    }
}

/* A work-group's tiles: the K and V buffers, their mbarriers (full: the
 * loader's arrival and the tile's bytes; free: an arrival a warp), and
 * what the loader loads them from: the maps, batch B's kv head HK's keys
 * from LO. */
struct aw_tiles {
    __local ushort *kbuf, *vbuf;
    __local ulong *full_k, *full_v, *free_k, *free_v;
    __global ulong *map;
    long lo;
    uint b, hk;
};

/* The loader: K's (V's with VALUES) tile I into its buffer, counted on
 * its full mbarrier. */
inline void aw_load(const struct aw_tiles *at, int i, int values)
{
    const uint s = i % 2, j0 = (uint)(at->lo + (long)i * WG_KEYS);
    __local ushort *dst = (values ? at->vbuf : at->kbuf) + s * AW_KV_ROOM;
    __local ulong *full = (values ? at->full_v : at->full_k) + s;
    tma_bar_expect(full, AW_KV_ROOM * 2);
    atm_load(dst, at->map + (values ? 16 : 0), at->hk, j0, at->b, full);
}

/* This warp done with K's (V's with VALUES) tile I: its arrival; and the
 * loader, once every warp has arrived, loads tile I + 2 of TILES there. */
inline void aw_done_with(const struct aw_tiles *at, int i, int tiles,
                         int values, uint tid)
{
    __local ulong *free = (values ? at->free_v : at->free_k) + i % 2;
    if (tid % 32 == 0) {
        wg_bar_arrive(free);
    }
    if (tid == AW_LOADER && i + 2 < tiles) {
        wg_bar_wait(free, (i / 2) & 1);
        aw_load(at, i + 2, values);
    }
}

/* Warpgroup G of this work-item TID over the TILES key tiles of AT (the
 * first two K and V tiles loading): leaves M, L and ACC as am_block does
 * for its rows (W). */
inline void aw_multiply(__local ushort *qs, const struct aw_tiles *at,
                        const struct am_walk *w, int tiles, uint tid,
                        float m[2], float l[2], float acc[MMA_DT][4])
{
    const uint g = tid / 128, t = tid % 4;
    uint p[AW_NT / 2][4];
    float s[AW_NT][4], alpha[2];
    /* Step i: S of tile i beside O += P V of tile i - 1, the first and
     * the last step apart (ptxas keeps products in flight across
     * straight-line code only). */
    if (g == AW_GROUPS - 1) {
        aw_turn_give(g); /* the first turn is warpgroup 0's */
    }
    wg_bar_wait(at->full_k, 0);
    aw_turn_wait(g);
    aw_scores(qs, at->kbuf, g, (float *)s);
    aw_turn_give(g);
    aw_wait_all_s((float *)s);
    aw_done_with(at, 0, tiles, 0, tid);
    am_tile_probabilities(s, AW_NT, w, w->lo, t, m, l, alpha);
    aw_pack(s, p);
    for (int i = 1; i < tiles; i++) {
        const uint sk = i % 2, sv = (i - 1) % 2;
        wg_bar_wait(at->full_k + sk, (i / 2) & 1);
        wg_bar_wait(at->full_v + sv, ((i - 1) / 2) & 1);
        aw_turn_wait(g);
        aw_scores(qs, at->kbuf + sk * AW_KV_ROOM, g, (float *)s);
        aw_accumulate(at->vbuf + sv * AW_KV_ROOM, p, (float *)acc);
        aw_turn_give(g);
        aw_wait_s((float *)s);
        aw_done_with(at, i, tiles, 0, tid);
        am_tile_probabilities(s, AW_NT, w, w->lo + (long)i * WG_KEYS, t, m,
                              l, alpha);
        aw_wait_o((float *)acc, p);
        aw_done_with(at, i - 1, tiles, 1, tid);
        am_rescale(acc, alpha);
        aw_pack(s, p);
    }
    const uint sv = (tiles - 1) % 2;
    wg_bar_wait(at->full_v + sv, ((tiles - 1) / 2) & 1);
    aw_turn_wait(g);
    aw_accumulate(at->vbuf + sv * AW_KV_ROOM, p, (float *)acc);
    if (g != AW_GROUPS - 1) {
        aw_turn_give(g); /* the last turn is the last warpgroup's */
    }
    aw_wait_o((float *)acc, p);
}

__kernel __attribute__((reqd_work_group_size(AW_ITEMS, 1, 1)))
void attention_wgmma_tma(const int seq_q, const int seq_kv,
                         const __global storage_t *q,
                         const __global storage_t *k,
                         const __global storage_t *v, __global storage_t *o,
                         __global float *lse, __global float *scratch)
{
    /* wgmma's swizzle follows address bits: tiles on 1024-byte lines */
    __local ushort room[AW_ROOM] __attribute__((aligned(1024)));
    /* full and free, two K and two V buffers */
    __local ulong bars[8];
    long b, r0;
    int hk;
    if (!am_block_at(seq_q, MMA_Q, &b, &hk, &r0)) {
        return;
    }
    const uint tid = get_local_id(0);
    __local ushort *qs = room;
    struct aw_tiles at = {
        .kbuf = room + AW_Q_ROOM,
        .vbuf = room + AW_Q_ROOM + 2 * AW_KV_ROOM,
        .full_k = bars, .full_v = bars + 2, .free_k = bars + 4,
        .free_v = bars + 6,
        .map = atm_slot(scratch),
        .b = (uint)b, .hk = (uint)hk};
    long hi;
    attn_key_range(seq_q, seq_kv, r0, MMA_Q, 0, seq_kv, &at.lo, &hi);
    const int tiles =
        at.lo < hi ? (int)((hi - at.lo + WG_KEYS - 1) / WG_KEYS) : 0;
    if (tid == AW_LOADER) {
        for (uint i = 0; i < 8; i++) {
            wg_bar_init(bars + i, i < 4 ? 1 : AW_ITEMS / 32);
        }
        if (tiles > 0) {
            atm_map(at.map, k, seq_kv, KV_HEADS);
            atm_map(at.map + 16, v, seq_kv, KV_HEADS);
        }
    }
    aw_load_q(qs, q, seq_q, b, hk, r0, tid);
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    wg_fence_proxy(); /* Q's copies and the mbarriers' init */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (tid == AW_LOADER) {
        for (int i = 0; i < min(tiles, 2); i++) {
            aw_load(&at, i, 0);
            aw_load(&at, i, 1);
        }
    }

    const long ra = r0 + tid / 32 * 16 + tid % 32 / 4;
    float m[2], l[2], acc[MMA_DT][4];
    const struct am_walk w = am_walk_start(seq_q, seq_kv, r0, MMA_Q, 0,
                                           seq_kv, ra, m, l, acc);
    if (tiles > 0) {
        aw_multiply(qs, &at, &w, tiles, tid, m, l, acc);
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        l[h] = am_quad_sum(l[h]);
    }
    am_store(o, lse, seq_q, b, hk, ra, m, l, acc);
}
