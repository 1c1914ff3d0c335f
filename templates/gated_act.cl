/* gated_act.cl - the activations of the gated MLP (swiglu.cl,
 * swiglu_backward.cl) and their derivatives, in float32 on vectors of
 * VEC elements (floatv, loadv, storev).
 *
 * Storage: storage_DTYPE.cl first. Macros: ACTIVATION (ACT_SILU,
 * ACT_GELU_TANH or ACT_GELU, the exact one on erf), VEC (1, 2, 4 or 8)
 * and EXP_POLY (1: the sigmoid's exponential as a polynomial, CPUs). */

#define ACT_SILU 0
#define ACT_GELU_TANH 1
#define ACT_GELU 2

#if !defined(ACTIVATION) || !defined(VEC) || !defined(EXP_POLY)
#error "gated_act.cl: the plan defines ACTIVATION, VEC and EXP_POLY"
#endif

#if VEC == 8
typedef float8 floatv;
typedef int8 intv;
#define as_floatv as_float8
#define as_intv as_int8
#define loadv load8
#define storev store8
#elif VEC == 4
typedef float4 floatv;
typedef int4 intv;
#define as_floatv as_float4
#define as_intv as_int4
#define loadv load4
#define storev store4
#elif VEC == 2
typedef float2 floatv;
typedef int2 intv;
#define as_floatv as_float2
#define as_intv as_int2
#define loadv load2
#define storev store2
#elif VEC == 1
typedef float floatv;
typedef int intv;
#define as_floatv as_float
#define as_intv as_int
#define loadv load1
#define storev store1
#else
#error "gated_act.cl: VEC is 1, 2, 4 or 8"
#endif

/* sqrt(2 / pi), GELU's cubic term, 1 / sqrt(2) and 1 / sqrt(2 pi). */
#define GELU_K 0.7978845608028654f
#define GELU_C 0.044715f
#define INV_SQRT2 0.7071067811865476f
#define INV_SQRT_2PI 0.3989422804014327f

/* Past this |x| the tanh form's slope is 1 or 0 to every float, and x^3
 * times x^2 would reach infinity times 0 on the way there. */
#define GELU_TANH_FLAT 1e4f

#if EXP_POLY
/* e^t for t <= 0 in float arithmetic alone: y = t log2(e) = n + f with
 * n whole and |f| <= 1/2, 2^f by Cephes' exp2f polynomial (1e-7), 2^n
 * in two factors so that it reaches the subnormals and 0. The product
 * t log2(e) costs |y| 2^-24 of relative error more (1e-6 at t = -10),
 * far inside the op's bounds. PoCL's exp left the CPU kernels
 * compute-bound; this one vectorizes into a few multiply-adds. */
inline floatv exp_nonpos(floatv t)
{
    const floatv y = fmax(t * M_LOG2E_F, (floatv)-150.0f);
    /* y + 1.5 * 2^23 rounds y to a whole number in its low mantissa
     * bits. */
    const floatv r = y + 12582912.0f;
    const floatv f = y - (r - 12582912.0f);
    floatv p = (floatv)1.535336188319500e-4f;
    p = p * f + 1.339887440266574e-3f;
    p = p * f + 9.618437357674640e-3f;
    p = p * f + 5.550332471162809e-2f;
    p = p * f + 2.402264791363012e-1f;
    p = p * f + 6.931472028550421e-1f;
    const intv n = as_intv(r) - 0x4b400000;
    const intv n_lo = n >> 1;
    return (p * f + 1.0f) * as_floatv((n_lo + 127) << 23) *
           as_floatv((n - n_lo + 127) << 23);
}

/* 1 / (1 + e^-x) from one exp of -|x|, which never overflows; the
 * numerator (e^-|x| for x < 0, else 1) picked by the sign bit: select
 * on vectors runs lane by lane on PoCL. */
inline floatv act_sigmoid(floatv x)
{
    const floatv e = exp_nonpos(-fabs(x));
    const intv negative = as_intv(x) >> 31;
    const floatv num = as_floatv((as_intv(e) & negative) |
                                 (as_intv((floatv)1.0f) & ~negative));
    return num / (1.0f + e);
}
#else
/* 1 / (1 + e^-x) from one exp of -|x|, which never overflows. */
inline floatv act_sigmoid(floatv x)
{
    floatv e = exp(-fabs(x));
    floatv s = 1.0f / (1.0f + e);
    return select(e * s, s, (intv)isgreaterequal(x, (floatv)0.0f));
}
#endif

/* The tanh form's 0.5 (1 + tanh(u)) as sigmoid(2u): 1 + tanh(u) would
 * cancel to nothing for x below -3 or so. */
inline floatv gelu_tanh_s(floatv x)
{
    return act_sigmoid(2.0f * GELU_K * (x + GELU_C * x * x * x));
}

/* The activation of x. */
inline floatv act(floatv x)
{
#if ACTIVATION == ACT_SILU
    return x * act_sigmoid(x);
#elif ACTIVATION == ACT_GELU_TANH
    return x * gelu_tanh_s(x);
#else
    /* erfc keeps the tiny values far below 0, where 1 + erf cancels. */
    return 0.5f * x * erfc(-x * INV_SQRT2);
#endif
}

/* d act(x) / dx. */
inline floatv act_grad(floatv x)
{
#if ACTIVATION == ACT_SILU
    floatv s = act_sigmoid(x);
    return s + x * s * (1.0f - s);
#elif ACTIVATION == ACT_GELU_TANH
    floatv s = gelu_tanh_s(x);
    floatv g = s + 2.0f * x * s * (1.0f - s) * GELU_K *
                       (1.0f + 3.0f * GELU_C * x * x);
    floatv flat = select((floatv)0.0f, (floatv)1.0f,
                         (intv)isgreater(x, (floatv)0.0f));
    return select(g, flat, (intv)isgreater(fabs(x), (floatv)GELU_TANH_FLAT));
#else
    return 0.5f * erfc(-x * INV_SQRT2) + x * INV_SQRT_2PI * exp(-0.5f * x * x);
#endif
}
