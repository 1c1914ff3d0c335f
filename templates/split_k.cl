/* split_k.cl - where the split path's lora_main leaves its partial sums
 * for lora_combine (see lora_common.cl).
 *
 * The scratch holds, in floats: T's XA_SPLIT partial sums from lora_xa
 * (rows x XA_SPLIT * RANK), rounded up to a multiple of 4 so that float4
 * stores stay aligned, then one rows x OUT_FEATURES slice of Y's partial
 * sums per K slice. */
#define SPLIT_PART(rows, s)                                              \
    ((((size_t)(rows) * (XA_SPLIT * RANK) + 3) & ~(size_t)3) +           \
     (size_t)(s) * (size_t)(rows) * OUT_FEATURES)
