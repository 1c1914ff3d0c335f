#!/usr/bin/env python3
"""decode_swap.py SRC KEYS STAGES > OUT.cl - a lab edit of the decode
step's variant source (attention_mma_part_merged's; bench/lab/
ncu-decode.sh): kernel decode_swap, the split path's walk with the
products' roles swapped. The split path puts a (batch, kv head)'s GROUP
query rows in the 16 rows of m16n8k16's A operand (4 of 16 rows real at
GROUP 4), so a warp holds 16 rows of outputs (64 registers) and Q's
fragments (32). Here the keys are A's rows and the query heads B's 8
columns: S^T = K Q^T (K's tile by ldmatrix, Q^T's fragments 16
registers for the whole walk) and O^T += V^T P^T (V's tile by
ldmatrix .trans, P^T through 384 bytes of local memory), O^T 32
registers. KEYS keys a tile (16 or 32), STAGES tiles of K and V in a
ring (1: one K and one V, each copy started a step ahead, as the split
path does). One warp a work-group, the split path's records and its
last work-group's merge; GROUP <= 8, one query (seq_q 1). Launch:
local (32, 1), groups (splits, batch * KV_HEADS), split fastest in the
split path's order (attn_split_group).

Also makes the split path's own kernel runnable outside OpenCL (ptx_run):
attn_split_group's get_num_groups, which NVIDIA's PTX reads from a
driver register that ptx_run sets to 0, from the splits argument and
LAB_HEADS (one block of rows: seq_q <= SPLIT_Q / GROUP)."""
import sys

src = open(sys.argv[1]).read()
keys, stages = int(sys.argv[2]), int(sys.argv[3])
old = "const long heads=get_num_groups(1);"
if old not in src:
    old = "const long heads = get_num_groups(1);"
assert old in src, "attn_split_group's heads not found"
src = src.replace(old, "const long heads=LAB_HEADS;")
for g0 in ("(long)get_num_groups(0)*get_group_id(1)",
           "(long)get_num_groups(0) * get_group_id(1)"):
    src = src.replace(g0, "(long)splits*get_group_id(1)")
assert "get_num_groups(0)*get_group_id(1)" not in src

head = f"""#define LAB_HEADS 64
#define DS_K {keys}
#define DS_STAGES {stages}
"""
kernel = r"""
#define DS_MT (DS_K / 16)            /* m16 tiles of keys a tile */
#define DS_TILE (DS_K * MMA_LD)      /* ushorts: K's or V's tile */
#define DS_PT 24                     /* P^T's row: 8 heads, keys padded */

/* K's and V's tiles of keys [J0, J0 + NK) of the (batch, kv head) whose
 * first key is at KB, VB, into KS and VS (zeros past NK): one commit
 * group. */
inline void ds_copy(__local ushort *ks, __local ushort *vs,
                    const __global storage_t *kb,
                    const __global storage_t *vb, long j0, int nk,
                    uint lane)
{
    for (uint i = lane; i < DS_K * (MMA_DP / 8); i += 32) {
        const uint jj = i / (MMA_DP / 8), c = i % (MMA_DP / 8);
        const uint ok = jj < (uint)nk && c < MMA_CHUNKS;
        const size_t off = ((size_t)(j0 + jj) * KV_HEADS) * HEAD_DIM + c * 8;
        mma_copy16(ks + jj * MMA_LD + c * 8, ok ? kb + off : kb, ok ? 16 : 0);
        mma_copy16(vs + jj * MMA_LD + c * 8, ok ? vb + off : vb, ok ? 16 : 0);
    }
    mma_commit();
}

/* One tile of keys from J0 (below HI) in KS, VS: scores S^T, the online
 * softmax of the thread's two head columns (2t, 2t + 1), O^T += V^T P^T.
 * M: the columns' maxima (base 2), L: the thread's partial sums. */
inline void ds_tile(__local ushort *ks, __local ushort *vs,
                    __local ushort *pt, const uint qb[MMA_KT][2], long j0,
                    long hi, uint lane, float m[2], float l[2],
                    float o[MMA_KT][4])
{
    const uint g = lane / 4, t = lane % 4;
    float s[DS_MT][4];
#pragma unroll
    for (int mt = 0; mt < DS_MT; mt++) {
        s[mt][0] = s[mt][1] = s[mt][2] = s[mt][3] = 0.0f;
        const uint row = mt * 16 + (lane % 8) + ((lane >> 3) & 1) * 8;
#pragma unroll
        for (int kk = 0; kk < MMA_KT; kk++) {
            uint a[4];
            mma_x4(ks + row * MMA_LD + kk * 16 + (lane >> 4) * 8, &a[0],
                   &a[1], &a[2], &a[3]);
            mma_product(s[mt], a, qb[kk][0], qb[kk][1]);
        }
    }
    /* Scale; keys past HI and padded heads hidden. */
    float mx[2] = {m[0], m[1]};
#pragma unroll
    for (int mt = 0; mt < DS_MT; mt++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const long j = j0 + mt * 16 + g + (e >= 2 ? 8 : 0);
            const int head = 2 * (int)t + (e & 1);
            float x = s[mt][e] * Q_MUL;
            s[mt][e] = (j < hi && head < GROUP) ? x : -INFINITY;
            mx[e & 1] = fmax(mx[e & 1], s[mt][e]);
        }
    }
    float base[2], alpha[2];
#pragma unroll
    for (int c = 0; c < 2; c++) {
        float y;
        asm volatile("shfl.sync.bfly.b32 %0, %1, 4, 0x1f, 0xffffffff;"
                     : "=f"(y) : "f"(mx[c]));
        mx[c] = fmax(mx[c], y);
        asm volatile("shfl.sync.bfly.b32 %0, %1, 8, 0x1f, 0xffffffff;"
                     : "=f"(y) : "f"(mx[c]));
        mx[c] = fmax(mx[c], y);
        asm volatile("shfl.sync.bfly.b32 %0, %1, 16, 0x1f, 0xffffffff;"
                     : "=f"(y) : "f"(mx[c]));
        mx[c] = fmax(mx[c], y);
        base[c] = mx[c] == -INFINITY ? 0.0f : mx[c];
        alpha[c] = am_exp2(m[c] - base[c]);
        m[c] = mx[c];
        l[c] *= alpha[c];
    }
#pragma unroll
    for (int d = 0; d < MMA_KT; d++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            o[d][e] *= alpha[e & 1];
        }
    }
    /* P^T, rounded to the storage type, through local memory into B's
     * fragments: pt[head][key]. */
#pragma unroll
    for (int mt = 0; mt < DS_MT; mt++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const float p = am_exp2(s[mt][e] - base[e & 1]);
            l[e & 1] += p;
            pt[(2 * t + (e & 1)) * (DS_K + 8) + mt * 16 + g +
               (e >= 2 ? 8 : 0)] = (ushort)am_pack(p, 0.0f);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint vrow = (lane & 7) + ((lane >> 4) & 1) * 8;
    const uint vcol = ((lane >> 3) & 1) * 8;
#pragma unroll
    for (int mt = 0; mt < DS_MT; mt++) {
        const __local uint *pb =
            (const __local uint *)(pt + g * (DS_K + 8) + mt * 16 + 2 * t);
        const uint b0 = pb[0], b1 = pb[4];
#pragma unroll
        for (int d = 0; d < MMA_KT; d++) {
            uint a[4];
            mma_trans_x4(vs + (mt * 16 + vrow) * MMA_LD + d * 16 + vcol,
                         &a[0], &a[1], &a[2], &a[3]);
            mma_product(o[d], a, b0, b1);
        }
    }
}

__kernel __attribute__((reqd_work_group_size(32, 1, 1)))
void decode_swap(const int slices, const int seq_q, const int seq_kv,
                 const __global storage_t *q, const __global storage_t *k,
                 const __global storage_t *v, __global storage_t *o,
                 __global float *lse, __global float *scratch,
                 __global uint *sync)
{
    __local ushort ring[DS_STAGES * 2 * DS_TILE] __attribute__((aligned(16)));
    __local ushort pt[8 * (DS_K + 8)] __attribute__((aligned(16)));
    __local uint last;
    const uint lane = get_local_id(0), g = lane / 4, t = lane % 4;
    const long order = get_group_id(0) + (long)slices * get_group_id(1);
    const int split = (int)(order / LAB_HEADS % slices);
    const long b = order % LAB_HEADS / KV_HEADS;
    const int hk = (int)(order % LAB_HEADS % KV_HEADS);
    const long chunk = (((long)seq_kv + slices - 1) / slices + DS_K - 1) /
                       DS_K * DS_K;
    const long lo = split * chunk;
    const long hi = min(lo + chunk, (long)seq_kv);
    const __global storage_t *kb =
        k + ((size_t)b * seq_kv * KV_HEADS + hk) * HEAD_DIM;
    const __global storage_t *vb =
        v + ((size_t)b * seq_kv * KV_HEADS + hk) * HEAD_DIM;

    /* Q^T's B fragments: head g's values 2t, 2t + 1 (+ 8) of each k16
     * step; zero for heads past the group. */
    uint qb[MMA_KT][2];
    const __global uint *qr = (const __global uint *)(
        q + ((size_t)b * seq_q * HEADS + hk * GROUP + min(g, GROUP - 1u)) *
                HEAD_DIM);
#pragma unroll
    for (int kk = 0; kk < MMA_KT; kk++) {
        qb[kk][0] = g < GROUP ? qr[kk * 8 + t] : 0u;
        qb[kk][1] = g < GROUP ? qr[kk * 8 + 4 + t] : 0u;
    }
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
    float acc[MMA_KT][4];
#pragma unroll
    for (int d = 0; d < MMA_KT; d++) {
        acc[d][0] = acc[d][1] = acc[d][2] = acc[d][3] = 0.0f;
    }
#if DS_STAGES == 1
    __local ushort *ks = ring, *vs = ring + DS_TILE;
    if (lo < hi) {
        ds_copy(ks, vs, kb, vb, lo, (int)min((long)DS_K, hi - lo), lane);
    }
    for (long j0 = lo; j0 < hi; j0 += DS_K) {
        asm volatile("cp.async.wait_group 0;" ::: "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        ds_tile(ks, vs, pt, qb, j0, hi, lane, m, l, acc);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (j0 + DS_K < hi) {
            ds_copy(ks, vs, kb, vb, j0 + DS_K,
                    (int)min((long)DS_K, hi - j0 - DS_K), lane);
        }
    }
#else
    for (int s = 0; s < DS_STAGES - 1; s++) {
        const long j = lo + s * DS_K;
        if (j < hi) {
            ds_copy(ring + s * 2 * DS_TILE, ring + (s * 2 + 1) * DS_TILE, kb,
                    vb, j, (int)min((long)DS_K, hi - j), lane);
        } else {
            mma_commit();
        }
    }
    int slot = 0;
    for (long j0 = lo; j0 < hi; j0 += DS_K) {
        const long jn = j0 + (DS_STAGES - 1) * DS_K;
        const int sn = (slot + DS_STAGES - 1) % DS_STAGES;
        if (jn < hi) {
            ds_copy(ring + sn * 2 * DS_TILE, ring + (sn * 2 + 1) * DS_TILE,
                    kb, vb, jn, (int)min((long)DS_K, hi - jn), lane);
        } else {
            mma_commit();
        }
        asm volatile("cp.async.wait_group %0;" ::"n"(DS_STAGES - 1)
                     : "memory");
        barrier(CLK_LOCAL_MEM_FENCE);
        ds_tile(ring + slot * 2 * DS_TILE, ring + (slot * 2 + 1) * DS_TILE,
                pt, qb, j0, hi, lane, m, l, acc);
        barrier(CLK_LOCAL_MEM_FENCE);
        slot = (slot + 1) % DS_STAGES;
    }
#endif
    /* The columns' sums over the keys (lanes of one t), then the records
     * of heads 2t and 2t + 1. */
#pragma unroll
    for (int c = 0; c < 2; c++) {
        float y;
        asm volatile("shfl.sync.bfly.b32 %0, %1, 4, 0x1f, 0xffffffff;"
                     : "=f"(y) : "f"(l[c]));
        l[c] += y;
        asm volatile("shfl.sync.bfly.b32 %0, %1, 8, 0x1f, 0xffffffff;"
                     : "=f"(y) : "f"(l[c]));
        l[c] += y;
        asm volatile("shfl.sync.bfly.b32 %0, %1, 16, 0x1f, 0xffffffff;"
                     : "=f"(y) : "f"(l[c]));
        l[c] += y;
    }
#pragma unroll
    for (int c = 0; c < 2; c++) {
        const int head = 2 * (int)t + c;
        if (head >= GROUP) {
            continue;
        }
        __global float *rec =
            scratch +
            (attn_row(seq_q, b, hk, head) * slices + split) * ATTN_REC;
#pragma unroll
        for (int d = 0; d < MMA_KT; d++) {
            rec[16 * d + g] = acc[d][c];
            rec[16 * d + g + 8] = acc[d][2 + c];
        }
        if (g == 0) {
            rec[HEAD_DIM] = m[c];
            rec[HEAD_DIM + 1] = l[c];
        }
    }
    attn_merge_last(o, lse, scratch, sync, seq_q, b, hk, 1, 0, slices,
                    SPLIT_Q, (__local float *)ring, &last, 32);
}
"""
sys.stdout.write(head + src + kernel)
