/* softmax_coop.cl - the one-launch split path: each work-group takes one
 * chunk of one row (vectors chunk * COOP_VECS up to coop_end(chunk)),
 * forms the chunk's pair (its largest h and the sum of exponentials
 * relative to it, softmax_common.cl), publishes it, waits until every
 * chunk of its row has (a barrier across the row's COOP_GROUPS
 * work-groups), merges the row's pairs and writes the chunk's outputs.
 * With COOP_IN_REGISTERS the chunk stays in registers from its load to
 * its store (x read once); else it is read again after the barrier.
 *
 * The barrier needs every work-group of the row running at once: the
 * stub launches this kernel only while rows x COOP_GROUPS work-groups fit
 * the device's compute units, one each. Its counters live in the
 * handle's sync buffer, zeroed at create; row r's are words 2r (arrivals)
 * and 2r + 1 (generation), then at 2 * COOP_ROWS + 2 * (r * COOP_GROUPS
 * + c) the pair of chunk c as float bits. The last work-group to arrive
 * resets the arrivals to 0 and then moves the generation on, which the
 * others wait for: every launch leaves the arrivals as it found them,
 * whatever the generation, so no launch needs them cleared. Calls of one
 * handle must not overlap on the device (the header says so).
 *
 * Every work-group of a row merges the same pairs in the same order (item
 * i folds pairs i, i + COOP_WG, ... in turn, then merge_pairs' tree), so
 * all of them hold the same bits, whatever the timing.
 *
 * Buffers: x, y (rows x FEATURES); sync (2 * COOP_ROWS * (1 +
 * COOP_GROUPS) words).
 * Launch: local (COOP_WG, 1), groups (COOP_GROUPS, rows), rows at most
 * COOP_ROWS. */
#include "softmax_common.cl"

#if !defined(COOP_GROUPS) || !defined(COOP_VECS) || !defined(COOP_WG) ||  \
    !defined(COOP_SLOTS) || !defined(COOP_IN_REGISTERS) ||                \
    !defined(COOP_ROWS)
#error "softmax_coop: the plan must define the COOP_* geometry"
#endif
#if COOP_GROUPS * COOP_VECS < NVEC || (COOP_GROUPS - 1) * COOP_VECS >= NVEC
#error "softmax_coop: COOP_GROUPS chunks of COOP_VECS must cover NVEC"
#endif
#if (COOP_WG & (COOP_WG - 1)) != 0 || COOP_SLOTS * COOP_WG < COOP_VECS
#error "softmax_coop: COOP_WG must be a power of two, with COOP_SLOTS each"
#endif

inline uint coop_end(uint c)
{
    return min((c + 1) * COOP_VECS, (uint)NVEC);
}

/* Orders this work-item's global writes before its later ones, as every
 * other work-group sees them: membar.gl where PTX is at hand (device
 * scope, certainly), else OpenCL's fence. */
inline void coop_fence(void)
{
#if SHFL_PTX
    asm volatile("membar.gl;" ::: "memory");
#else
    mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
}

/* Publishes (M, S) as chunk CHUNK's pair of ROW, waits for the row's
 * other chunks and returns the row's pair, merged in a fixed order. */
inline void coop_row_pair(volatile __global uint *sync, uint row, uint chunk,
                          __local float *pm, __local float *ps, uint lid,
                          float *m, float *s)
{
    volatile __global uint *counters = sync + 2 * row;
    volatile __global uint *pairs =
        sync + 2 * COOP_ROWS + 2 * (size_t)row * COOP_GROUPS;
    if (lid == 0) {
        atomic_xchg(&pairs[2 * chunk], as_uint(*m));
        atomic_xchg(&pairs[2 * chunk + 1], as_uint(*s));
        /* Read before arriving: it moves only once all have arrived. */
        const uint generation = atomic_add(&counters[1], 0u);
        coop_fence();
        if (atomic_inc(&counters[0]) == COOP_GROUPS - 1) {
            atomic_xchg(&counters[0], 0u);
            coop_fence();
            atomic_inc(&counters[1]);
        } else {
            while (atomic_add(&counters[1], 0u) == generation) {
            }
        }
        coop_fence();
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    float mr = NO_MAX;
    float sr = 0.0f;
    for (uint c = lid; c < COOP_GROUPS; c += COOP_WG) {
        merge_pair(&mr, &sr, as_float(pairs[2 * c]),
                   as_float(pairs[2 * c + 1]));
    }
    merge_pairs(pm, ps, lid, COOP_WG, &mr, &sr);
    *m = mr;
    *s = sr;
}

__kernel __attribute__((reqd_work_group_size(COOP_WG, 1, 1)))
void softmax_coop(const __global storage_t *x, __global storage_t *y,
                  volatile __global uint *sync)
{
    __local float pm[COOP_WG];
    __local float ps[COOP_WG];
    const uint lid = get_local_id(0);
    const uint chunk = get_group_id(0);
    const uint row = get_group_id(1);
    const size_t base = (size_t)row * FEATURES;
    const uint first = chunk * COOP_VECS + lid;
    const uint end = coop_end(chunk);

    float m = NO_MAX;
    float s;
#if COOP_IN_REGISTERS
    /* As softmax.cl's row in registers, over the chunk. */
    floatv v[COOP_SLOTS];
    floatv sv = 0.0f;
#pragma unroll
    for (uint k = 0; k < COOP_SLOTS; k++) {
        const uint j = first + k * COOP_WG;
        if (j < end) {
            v[k] = H_SIGN * loadv(x, base + j * VEC);
        }
    }
#pragma unroll
    for (uint k = 0; k < COOP_SLOTS; k++) {
        const uint j = first + k * COOP_WG;
        if (j < end) {
            const float mk = hmax(v[k]);
            if (EXP_SCALE * (mk - m) > RESCALE_ABOVE) {
                const float rescale = EXPS(m - mk);
                sv *= rescale;
#pragma unroll
                for (uint i = 0; i < k; i++) {
                    v[i] *= rescale;
                }
                m = mk;
            }
            v[k] = EXPS(v[k] - m);
            sv += v[k];
        }
    }
    s = hsum(sv);
    const float mine = m;
    merge_pairs(pm, ps, lid, COOP_WG, &m, &s);
    coop_row_pair(sync, row, chunk, pm, ps, lid, &m, &s);
    /* v holds exponentials relative to this item's reference. */
    const float f = EXPS(mine - m) / s;
#pragma unroll
    for (uint k = 0; k < COOP_SLOTS; k++) {
        const uint j = first + k * COOP_WG;
        if (j < end) {
            storev(y, base + j * VEC, v[k] * f);
        }
    }
#else
    s = stream_sum(x, base, first, end, COOP_WG, &m);
    merge_pairs(pm, ps, lid, COOP_WG, &m, &s);
    coop_row_pair(sync, row, chunk, pm, ps, lid, &m, &s);
    stream_out(x, y, base, first, end, COOP_WG, m, 1.0f / s);
#endif
}
