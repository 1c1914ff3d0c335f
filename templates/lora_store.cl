/* lora_store.cl - Y[i .. i + VEC) = V, or += V with ACCUMULATE: the row
 * stores of lora_expand and lora_combine (see lora_common.cl). */
inline void store_vec(__global storage_t *y, const size_t i, const vecf_t v)
{
#if VEC == 4
#if ACCUMULATE
    store4(y, i, v + load4(y, i));
#else
    store4(y, i, v);
#endif
#else
#pragma unroll
    for (int c = 0; c < VEC; c++) {
#if ACCUMULATE
        store1(y, i + c, VEC_AT(v, c) + load1(y, i + c));
#else
        store1(y, i + c, VEC_AT(v, c));
#endif
    }
#endif
}
