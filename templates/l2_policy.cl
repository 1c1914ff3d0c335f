/* l2_policy.cl - 16-byte loads and stores with an L2 eviction priority
 * (NVIDIA PTX: createpolicy and .L2::cache_hint; the capability l2_hint):
 * l2_keep() asks the cache to keep the lines an access touches
 * (evict_last), l2_drop() to let them go before others (evict_first).
 * Present only where a plan asks for the hints: softmax's STREAM_L2_HINTS
 * and cross_entropy's L2_HINTS. Include after storage_DTYPE.cl. */
#if (defined(STREAM_L2_HINTS) && STREAM_L2_HINTS) ||                     \
    (defined(L2_HINTS) && L2_HINTS)
inline ulong l2_keep(void)
{
    ulong policy;
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;"
        : "=l"(policy));
    return policy;
}

inline ulong l2_drop(void)
{
    ulong policy;
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;"
        : "=l"(policy));
    return policy;
}

/* The 16 bytes at P (16-byte aligned) under POLICY. */
inline uint4 load16_policy(const __global storage_t *p, ulong policy)
{
    uint4 v;
    asm volatile("ld.global.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], "
                 "%5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(policy));
    return v;
}

inline void store16_policy(__global storage_t *p, uint4 v, ulong policy)
{
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, "
                 "%5;"
                 :
                 : "l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w),
                   "l"(policy)
                 : "memory");
}
#endif
