/* lora_decode_part.cl - where lora_decode_split leaves its partial sums
 * for lora_decode_sum, in floats of scratch: DSUM_SLICES slices of X*W
 * (rows x OUT_FEATURES each), then as many of X*A (rows x RANK each). */
#if !defined(DSUM_SLICES)
#error "lora_decode_part.cl: the plan must define DSUM_SLICES"
#endif
#define DSUM_PART(rows, s) ((size_t)(s) * (size_t)(rows) * OUT_FEATURES)
#define DSUM_TPART(rows, s)                                              \
    ((size_t)DSUM_SLICES * (size_t)(rows) * OUT_FEATURES +               \
     (size_t)(s) * (size_t)(rows) * RANK)
