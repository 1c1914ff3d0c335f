#!/usr/bin/env python3
"""decode_heads.py SRC HPW > OUT.cl - a lab edit of the decode step's
variant source (attention_mma_part_merged's): kernel decode_heads, in
which one work-group of HPW warps takes HPW kv heads of one batch over
one split of the keys, a warp a head, so that the work-group's copies
of a key tile cover HPW * 256 contiguous bytes of each key (K and V are
[batch][seq][kv head][head_dim]) where one warp's cover 256. Each warp
runs the split path's walk (am_block) on its own local memory; the
work-group counts itself once on its (batch, head group)'s sync word,
and the last of the splits merges every head's rows. Launch: local
(32 * HPW, 1), groups (splits, batch * KV_HEADS / HPW). The walk's
functions take the item's lane for its local id (a macro over
get_local_id, after the kernel's own helpers)."""
import sys

src = open(sys.argv[1]).read()
hpw = int(sys.argv[2])
head = f"""#define HPW {hpw}
inline uint lab_warp(void) {{ return (uint)get_local_id(0) / 32; }}
inline uint lab_lid(void) {{ return (uint)get_local_id(0); }}
#define get_local_id(x) (get_local_id(x) % 32)
"""
kernel = """
__kernel __attribute__((reqd_work_group_size(32 * HPW, 1, 1)))
void decode_heads(const int slices, const int seq_q, const int seq_kv,
                  const __global storage_t *q, const __global storage_t *k,
                  const __global storage_t *v, __global storage_t *o,
                  __global float *lse, __global float *scratch,
                  __global uint *sync)
{
    __local ushort rooms[HPW * AMP_ROOM] __attribute__((aligned(16)));
    __local uint last;
    const uint warp = lab_warp();
    const int split = (int)get_group_id(0);
    const long b = (long)get_group_id(1) / (KV_HEADS / HPW);
    const int hk = (int)(get_group_id(1) % (KV_HEADS / HPW)) * HPW + warp;
    __local ushort *room = rooms + warp * AMP_ROOM;
    amp_records(seq_q, seq_kv, q, k, v, scratch, 0, split, slices, b, hk,
                room);
    grid_fence();
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (lab_lid() == 0) {
        last = atomic_inc(sync + get_group_id(1)) == (uint)slices - 1;
        if (last)
            atomic_xchg(sync + get_group_id(1), 0u);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (last) {
        grid_fence();
        attn_merge(o, lse, scratch, seq_q, b, hk, 0, GROUP * seq_q, slices,
                   (__local float *)room, get_local_id(0), 32);
    }
}
"""
sys.stdout.write(head + src + kernel)
