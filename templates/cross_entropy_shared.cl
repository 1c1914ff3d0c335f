/* cross_entropy_shared.cl - the loss and gradient of many long rows, each
 * shared by SHARE_GROUPS work-groups of WG_SIZE items (the row path,
 * cross_entropy.cl, gives a row one): part p of a row is its vectors
 * p * SHARE_VECS up to the next part's. Each work-group streams its part
 * once for the statistics (m, s, t), hands them to the row's other
 * work-groups through the row's words in the handle's sync buffer,
 * merges the row's in part order (the same bits in every work-group of
 * the row), then writes its part's gradient, reading the part again. A
 * row read by several work-groups at once is read sooner and fewer
 * rows are in flight, so the second read finds the first's bytes in the
 * cache.
 *
 * Work-groups take (row, part) from a ticket drawn as they start, so
 * that the tickets drawn are those of running work-groups: a row whose
 * tickets are not all drawn holds fewer than SHARE_GROUPS of them, and a
 * device that runs SHARE_GROUPS work-groups at once (the stub's check)
 * always has one more to start. A work-group waits only for its row's
 * others.
 *
 * The sync words from SHARE_SYNC_AT (zeroed at create; every launch
 * leaves them so): the tickets drawn and the work-groups done (the last
 * sets both back to 0), then for each row of at most SHARE_ROWS (the
 * stub's limit) its arrivals and departures (the last to leave sets both
 * back to 0), the logit at the label (from the work-group whose part
 * holds it, read before any gradient is written: dlogits may be logits)
 * and (m, s, t) per part.
 *
 * Buffers: as cross_entropy.cl's, then sync. Launch: local (WG_SIZE, 1),
 * rows x SHARE_GROUPS work-groups along dimension 0. */
#include "cross_entropy_common.cl"
#include "grid_fence.cl"

#if !defined(SHARE_GROUPS) || !defined(SHARE_VECS) ||                     \
    !defined(SHARE_ROWS) || !defined(SHARE_SYNC_AT)
#error "cross_entropy_shared: the plan must define the SHARE_* geometry"
#endif
#if ROWS_PER_GROUP != 1 || !defined(SUM_BLOCK)
#error "cross_entropy_shared: one row a work-group, streamed"
#endif
#if SHARE_GROUPS * SHARE_VECS < NVEC
#error "cross_entropy_shared: SHARE_GROUPS parts of SHARE_VECS must cover"
#endif

#define SHARE_ROW_WORDS (3 + 3 * SHARE_GROUPS)
#define ROW_ARRIVED 0
#define ROW_LEFT 1
#define ROW_XY 2
#define ROW_PARTS 3

/* Word P of a row's set to the bits of V, for the row's other
 * work-groups to read after a fence and their count: with device-scope
 * fences a plain store; else an atomic one. */
inline void share_put(volatile __global uint *p, float v)
{
#if GRID_MEMBAR_PTX
    *p = as_uint(v);
#else
    atomic_xchg(p, as_uint(v));
#endif
}

/* Row ROW's statistics from its parts': this work-group's (*m, *s, *t)
 * of part PART put in the row's words, with the logit at the label
 * (*xy, where HOLDS_LABEL); the others' awaited (polled by atomics,
 * which see the arrivals at once); all merged in part order into *m,
 * *s, *t, *xy. Item 0 alone calls it. */
inline void share_row_stats(volatile __global uint *words, uint row,
                            uint part, bool holds_label, float *m, float *s,
                            float *t, float *xy)
{
    volatile __global uint *w = words + 2 + (size_t)row * SHARE_ROW_WORDS;
    volatile __global uint *mine = w + ROW_PARTS + 3 * part;
    share_put(&mine[0], *m);
    share_put(&mine[1], *s);
    share_put(&mine[2], *t);
    if (holds_label) {
        share_put(&w[ROW_XY], *xy);
    }
    grid_fence(); /* the part's words before its arrival */
    atomic_inc(&w[ROW_ARRIVED]);
    while (atomic_add(&w[ROW_ARRIVED], 0u) < SHARE_GROUPS) {
    }
    grid_fence(); /* every part's words after their arrivals */
    float mm = as_float(w[ROW_PARTS]);
    float ss = as_float(w[ROW_PARTS + 1]);
    float tt = as_float(w[ROW_PARTS + 2]);
    for (uint p = 1; p < SHARE_GROUPS; p++) {
        const volatile __global uint *q = w + ROW_PARTS + 3 * p;
        merge_pair(&mm, &ss, as_float(q[0]), as_float(q[1]));
        tt += as_float(q[2]);
    }
    *m = mm;
    *s = ss;
    *t = tt;
    *xy = as_float(w[ROW_XY]);
    /* The last to leave: every part has seen every arrival. */
    if (atomic_inc(&w[ROW_LEFT]) == SHARE_GROUPS - 1) {
        atomic_xchg(&w[ROW_ARRIVED], 0u);
        atomic_xchg(&w[ROW_LEFT], 0u);
    }
}

__kernel __attribute__((reqd_work_group_size(WG_SIZE, 1, 1)))
void cross_entropy_shared(const int rows, const __global storage_t *logits,
                          const __global int *labels
#if REDUCE_NONE
                          , __global float *loss
#endif
#if GRAD
                          , __global storage_t *dlogits
#endif
#if !REDUCE_NONE
                          , __global float *scratch
#endif
                          , volatile __global uint *sync)
{
    __local float pm[WG_SIZE];
    __local float ps[WG_SIZE];
    __local float pt[WG_SIZE];
    __local float row_stats[4];
    __local uint ticket;
    const uint lid = get_local_id(0);
    volatile __global uint *words = sync + SHARE_SYNC_AT;
    (void)rows; /* the work-groups are rows x SHARE_GROUPS */
    if (lid == 0) {
        ticket = atomic_inc(&words[0]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint row = ticket / SHARE_GROUPS, part = ticket % SHARE_GROUPS;
    const size_t base = (size_t)row * FEATURES;
    const uint first = part * SHARE_VECS + lid;
    const uint end = min((part + 1) * SHARE_VECS, (uint)NVEC);
    const int label = labels[row];
    const bool holds_label =
        label_valid(label) && (uint)label / VEC / SHARE_VECS == part;
#if GRAD
    const float g = KERNEL_GRAD_SCALE(label);
#endif

    float m = NO_MAX, s = 0.0f, t = 0.0f;
    if (!label_ignored(label)) {
        stream_stats(logits, base, first, end, WG_SIZE, &m, &s, &t, true);
    }
    row_merge(pm, ps, lid, &m, &s);
#if SMOOTH
    t = sum_items(pt, lid, WG_SIZE, t);
#else
    (void)pt;
#endif
    if (lid == 0) {
        float xy = holds_label ? label_x(logits, base, label) : 0.0f;
        share_row_stats(words, row, part, holds_label, &m, &s, &t, &xy);
        row_stats[0] = m;
        row_stats[1] = s;
        row_stats[2] = t;
        row_stats[3] = label_valid(label) ? xy : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    m = row_stats[0];
    s = row_stats[1];
    t = row_stats[2];
    const float xy = row_stats[3];
    if (part == 0 && lid == 0) {
#if REDUCE_NONE
        loss[row] = row_loss(label, m, s, t, xy);
#else
        scratch[LOSSES_AT + row] = row_loss(label, m, s, t, xy);
#endif
    }
#if GRAD
    stream_grad(logits, dlogits, base, first, end, WG_SIZE, label, m, s, xy,
                g, true);
#endif
    /* The last work-group done: every ticket drawn. */
    if (lid == 0 && atomic_inc(&words[1]) == get_num_groups(0) - 1) {
        atomic_xchg(&words[0], 0u);
        atomic_xchg(&words[1], 0u);
    }
}
