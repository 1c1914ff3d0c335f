/* lora_decode_part.cl - where lora_decode_mma leaves its partial sums for
 * lora_decode_sum, in floats of scratch: DMMA_SLICES slices of X*W (rows x
 * OUT_FEATURES each), then as many of X*A (rows x RANK each). */
#if !defined(DMMA_SLICES)
#error "lora_decode_part.cl: the plan must define DMMA_SLICES"
#endif
#define DMMA_PART(rows, s) ((size_t)(s) * (size_t)(rows) * OUT_FEATURES)
#define DMMA_TPART(rows, s)                                              \
    ((size_t)DMMA_SLICES * (size_t)(rows) * OUT_FEATURES +               \
     (size_t)(s) * (size_t)(rows) * RANK)
