/* tanh_poly.cl - tanh u and its slope 1 - tanh^2 u in float arithmetic,
 * for the softcaps (z = cap tanh(x / cap)) of cross_entropy and, on
 * CPUs, attention, where PoCL's tanh runs lane by lane.
 *
 * Below a = |u| = 0.55, tanh a = a + a^3 P(a^2), P of degree 4 fitted to
 * within 4e-9 of tanh a relatively, and the slope is 1 - tanh^2 a (at
 * least 0.75 there: no digits lost). From 0.55 on, both come from one
 * exponential e = e^-2a: tanh a = (1 - e) / (1 + e), where 1 - e no
 * longer cancels, and the slope 4e / (1 + e)^2, from u itself, not as
 * 1 - tanh^2 of a rounded tanh, which keeps only an absolute 1e-7: none
 * of the slope's digits where tanh nears 1. A NaN u fails every compare
 * and stays NaN in P.
 *
 * TANH_SLOPE(T, N, ANY) defines, for T (float, or a float vector),
 * tanh_slopeN: tanh u, and the slope in *SLOPE (named apart, as OpenCL
 * C 1.2 overloads only its built-in functions). Where ANY(a >= 0.55f) is
 * false, the exponential and the reciprocal are skipped: ANY is any()
 * for a vector (a vector whose lanes all lie below 0.55 takes none),
 * nothing for a float (whose compare gives 1, where any() reads the sign
 * bit). The includer defines TANH_EXP2(y), 2^y, and TANH_RECIP(y), 1 / y
 * for y in [1, 2], first. */
#if !defined(TANH_EXP2) || !defined(TANH_RECIP)
#error "tanh_poly.cl: define TANH_EXP2 and TANH_RECIP first"
#endif

#define TANH_SLOPE(T, N, ANY)                                                 \
    inline T tanh_slope##N(T u, T *slope)                                     \
    {                                                                         \
        const T a = fabs(u);                                                  \
        const T s = a * a;                                                    \
        T p = -6.61022783e-3f;                                                \
        p = p * s + 2.13093887e-2f;                                           \
        p = p * s - 5.39094288e-2f;                                           \
        p = p * s + 1.33331137e-1f;                                           \
        p = p * s - 3.33333320e-1f;                                           \
        T t = a + a * s * p;                                                  \
        if (ANY(a >= 0.55f)) {                                                \
            const T e = TANH_EXP2(a * (-2.0f * M_LOG2E_F));                   \
            const T r = TANH_RECIP(1.0f + e);                                 \
            t = a < 0.55f ? t : (1.0f - e) * r;                               \
            *slope = 4.0f * e * r * r;                                        \
        } else {                                                              \
            *slope = 1.0f - t * t;                                            \
        }                                                                     \
        return copysign(t, u);                                                \
    }
