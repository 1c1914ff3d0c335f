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
 * Buffers: logits (rows x FEATURES), labels (rows, int32); loss (rows,
 * float32) with REDUCE_NONE; dlogits with GRAD; scratch (the count, the
 * rows' losses) unless REDUCE_NONE; sync (row_coop.cl; a row's words: 3
 * per chunk, then the logit at the label).
 * Launch: local (COOP_WG, 1), groups (chunks, rows): chunks from
 * COOP_GROUPS to COOP_GROUPS_MOST, rows at most COOP_ROWS. */
#include "cross_entropy_common.cl"
#include "row_coop.cl"

#if COOP_ROW_WORDS != 3 * COOP_GROUPS_MOST + 1
#error "cross_entropy_coop: a row's sync words are 3 per chunk, then 1"
#endif

__kernel __attribute__((reqd_work_group_size(COOP_WG, 1, 1)))
void cross_entropy_coop(const int rows, const __global storage_t *logits,
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
    (void)rows;

    float m = NO_MAX, s = 0.0f, t = 0.0f;
    if (!label_ignored(label)) {
        stream_stats(logits, base, first, end, COOP_WG, &m, &s, &t);
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
        scratch[LOSSES_AT + row] = row_loss(label, m, s, t, xy);
#endif
    }
#if GRAD
    const float g = KERNEL_GRAD_SCALE(label);
    stream_grad(logits, dlogits, base, first, end, COOP_WG, label, m, s, xy,
                g);
#endif
}
