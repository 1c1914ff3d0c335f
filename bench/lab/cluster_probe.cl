/* cluster_probe.cl - the kernel of cluster_probe.c: each work-group
 * reads its cluster rank, cluster size and cluster id, stores a word in
 * local memory, meets its cluster at a barrier, reads the next rank's
 * word through mapa (distributed shared memory), and times ITERS cluster
 * barriers. PX hides an instruction from the OpenCL build (PTX for
 * sm_90); cluster_probe.c deletes it from the PTX. */
#define PX "trap; //@sm_90a "
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void cluster_probe(__global uint *out, __global ulong *ticks, int iters)
{
    __local uint slot[4];
    uint rank = 0, n = 0, cid = 0, other = 0;
    const uint lid = get_local_id(0), g = get_group_id(0);
    asm volatile(PX "mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm volatile(PX "mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
    asm volatile(PX "mov.u32 %0, %%clusterid.x;" : "=r"(cid));
    if (lid == 0) {
        slot[0] = g * 10 + 1;
    }
    asm volatile(PX "barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile(PX "barrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (lid == 0 && n > 0) {
        uint peer = (rank + 1) % n;
        asm volatile("{ .reg .u32 s; cvt.u32.u64 s, %1;\n"
                     PX "mapa.shared::cluster.u32 s, s, %2;\n"
                     PX "ld.shared::cluster.u32 %0, [s];\n}"
                     : "=r"(other) : "l"(slot), "r"(peer) : "memory");
    }
    ulong t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    for (int i = 0; i < iters; i++) {
        asm volatile(PX "barrier.cluster.arrive.release.aligned;" ::: "memory");
        asm volatile(PX "barrier.cluster.wait.acquire.aligned;" ::: "memory");
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    /* peers may still read slot: leave together */
    asm volatile(PX "barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile(PX "barrier.cluster.wait.acquire.aligned;" ::: "memory");
    if (lid == 0) {
        out[g * 4 + 0] = rank;
        out[g * 4 + 1] = n;
        out[g * 4 + 2] = cid;
        out[g * 4 + 3] = other;
        ticks[g] = t1 - t0;
    }
}
