/* exp2_poly.cl - 2^y in float arithmetic alone, for CPUs, where PoCL's
 * exp and exp2 run lane by lane: y = n + f, n whole and |f| <= 1/2, 2^n
 * goes straight into the exponent bits and 2^f is its Taylor polynomial
 * of degree 7 (within 1e-7 of 2^f at worst, as exp2 is: a softmax's
 * outputs are weighted sums that may cancel, and a lesser polynomial's
 * error showed through them). y is held to [-127, 128]: n = -127 makes
 * 2^n zero, as exp2(-INFINITY) is, and n = 128 infinity; a NaN y gives
 * NaN.
 *
 * EXP2_POLY(T, AS_T, AS_I) defines exp2_poly for T, float or a float
 * vector (AS_T and AS_I its as_ conversions); this file defines it for
 * float, and a file that needs a vector type too instantiates that. */
#define EXP2_POLY(T, AS_T, AS_I)                                              \
    inline T __attribute__((overloadable)) exp2_poly(T y0)                    \
    {                                                                         \
        /* held to [-127, 128] by compares, false for a NaN, which            \
         * stays (one max and one min instruction on x86) */                  \
        T y = y0 < -127.0f ? (T)-127.0f : y0;                                 \
        y = y > 128.0f ? (T)128.0f : y;                                       \
        /* y + 1.5 * 2^23 + 127 holds n + 127 in its low mantissa bits */     \
        const T r = y + 12583039.0f;                                          \
        const T f = y - (r - 12583039.0f);                                    \
        T p = 1.5252733804e-5f;                                               \
        p = p * f + 1.5403530393e-4f;                                         \
        p = p * f + 1.3333558146e-3f;                                         \
        p = p * f + 9.6181291076e-3f;                                         \
        p = p * f + 5.5504108665e-2f;                                         \
        p = p * f + 2.4022650696e-1f;                                         \
        p = p * f + 6.9314718056e-1f;                                         \
        p = p * f + 1.0f;                                                     \
        return p * AS_T(AS_I(r) << 23);                                       \
    }

EXP2_POLY(float, as_float, as_int)
