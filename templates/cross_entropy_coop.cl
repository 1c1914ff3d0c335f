/* cross_entropy_coop.cl - the one-launch split path (row_coop.cl): each
 * work-group takes one chunk of one row, forms its statistics (m, s, t)
 * as cross_entropy_part does, publishes them (and the logit at the label,
 * where its chunk holds it), waits for the row's other chunks
 * (coop_wait), then merges the row's statistics in the same order in
 * every work-group of the row (softmax_combine.cl says why that gives
 * them the same bits): the first chunk's writes the row's loss, and with
 * GRAD each writes the gradient of its chunk, reading it again (recently:
 * from the cache on GPUs). dlogits may be logits: a work-group writes
 * only its own chunk, after every chunk's first reads (the barrier), and
 * the label's logit travels in the sync words.
 *
 * The whole loss in the same launch, unless REDUCE_NONE: every
 * work-group counts the rows that count itself (few rows: the path's
 * rows are at most COOP_ROWS), and the first chunk of the last row to
 * store its loss sums the rows' losses in row order (a counter of the
 * rows done, at COOP_DONE_AT of the sync words, which it sets back to 0):
 * the same bits whichever row is last.
 *
 * Buffers: logits (rows x FEATURES), labels (rows, int32); loss (rows,
 * float32 with REDUCE_NONE, else 1); dlogits with GRAD; scratch (the
 * rows' losses, at LOSSES_AT) unless REDUCE_NONE; sync (row_coop.cl; a
 * row's words: 3 per chunk, then the logit at the label).
 * Launch: local (COOP_WG, 1), groups (chunks, rows): chunks from
 * COOP_GROUPS to COOP_GROUPS_MOST, rows at most COOP_ROWS. */
#include "cross_entropy_common.cl"
#include "row_coop.cl"

#if COOP_ROW_WORDS != 3 * COOP_GROUPS_MOST + 1
#error "cross_entropy_coop: a row's sync words are 3 per chunk, then 1"
#endif

/* After the rows' words: the count of rows done (not REDUCE_NONE). */
#define COOP_DONE_AT (2 * COOP_ROWS + COOP_ROWS * COOP_ROW_WORDS)

#if REDUCE_MEAN
/* The rows whose label is not ignored, counted by the group's items
 * (integers: exact in any order), every item taking it. */
inline float coop_count(const int rows, const __global int *labels,
                        __local uint *count, uint lid)
{
    if (lid == 0) {
        *count = 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint n = 0;
    for (int r = (int)lid; r < rows; r += COOP_WG) {
        n += !label_ignored(labels[r]);
    }
    if (n != 0) {
        atomic_add(count, n);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    return (float)*count;
}
#endif

#if !REDUCE_NONE
/* Row ROW's loss V into SCRATCH; the last row to get there sums them all
 * into LOSS[0], over COUNT rows for the mean. */
inline void coop_total(const int rows, uint row, float v, float count,
                       __global float *loss, __global float *scratch,
                       volatile __global uint *sync)
{
    scratch[LOSSES_AT + row] = v;
    grid_fence(); /* the loss, before the row counts as done */
    volatile __global uint *done = sync + COOP_DONE_AT;
    if (atomic_inc(done) != (uint)rows - 1u) {
        return;
    }
    atomic_xchg(done, 0u);
    grid_fence(); /* every row's loss, after its count */
    const volatile __global float *losses =
        (const volatile __global float *)scratch + LOSSES_AT;
    float sum = 0.0f, err = 0.0f;
    for (int r = 0; r < rows; r++) {
        csum_add1(&sum, &err, losses[r]);
    }
#if REDUCE_MEAN
    loss[0] = csum_total1(sum, err) / count;
#else
    (void)count;
    loss[0] = csum_total1(sum, err);
#endif
}
#endif

__kernel __attribute__((reqd_work_group_size(COOP_WG, 1, 1)))
void cross_entropy_coop(const int rows, const __global storage_t *logits,
                        const __global int *labels, __global float *loss
#if GRAD
                        , __global storage_t *dlogits
#endif
#if !REDUCE_NONE
                        , __global float *scratch
#endif
                        , volatile __global uint *sync)
{
    __local float pm[COOP_WG];
    __local float ps[COOP_WG];
    __local float pt[COOP_WG];
    const uint lid = get_local_id(0);
    const uint chunk = get_group_id(0);
    const uint row = get_group_id(1);
    const size_t base = (size_t)row * FEATURES;
    const uint first = chunk * coop_vecs() + lid;
    const uint end = coop_end(chunk);
    const int label = labels[row];
    volatile __global uint *words = coop_words(sync, row);
    const uint generation = coop_generation(sync, row, lid);
#if REDUCE_MEAN
    __local uint counted;
    const float count = coop_count(rows, labels, &counted, lid);
#else
    const float count = 1.0f;
#endif

    float m = NO_MAX, s = 0.0f, t = 0.0f;
    if (!label_ignored(label)) {
        stream_stats(logits, base, first, end, COOP_WG, &m, &s, &t, false);
    }
    merge_pairs(pm, ps, lid, COOP_WG, &m, &s);
#if SMOOTH
    t = sum_items(pt, lid, COOP_WG, t);
#endif
    if (lid == 0) {
        coop_put(words, 3 * chunk, m);
        coop_put(words, 3 * chunk + 1, s);
        coop_put(words, 3 * chunk + 2, t);
        if (label_valid(label) && (uint)label / VEC / coop_vecs() == chunk) {
            coop_put(words, 3 * COOP_GROUPS_MOST,
                     label_x(logits, base, label));
        }
    }
    coop_wait(sync, row, lid, generation);
    const float xy =
        label_valid(label) ? coop_get(words, 3 * COOP_GROUPS_MOST) : 0.0f;
    m = NO_MAX;
    s = 0.0f;
    t = 0.0f;
    for (uint c = lid; c < coop_groups(); c += COOP_WG) {
        merge_pair(&m, &s, coop_get(words, 3 * c),
                   coop_get(words, 3 * c + 1));
        t += coop_get(words, 3 * c + 2);
    }
    merge_pairs(pm, ps, lid, COOP_WG, &m, &s);
#if SMOOTH
    t = sum_items(pt, lid, COOP_WG, t);
#else
    (void)pt;
#endif
    if (chunk == 0 && lid == 0) {
#if REDUCE_NONE
        loss[row] = row_loss(label, m, s, t, xy);
#else
        coop_total(rows, row, row_loss(label, m, s, t, xy), count, loss,
                   scratch, sync);
#endif
    }
    (void)count;
#if GRAD
    /* grad_scale's, from this group's count. */
    const float g = label_valid(label) ? 1.0f / count : NAN;
    stream_grad(logits, dlogits, base, first, end, COOP_WG, label, m, s, xy,
                g, false);
#endif
}
