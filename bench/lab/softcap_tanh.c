/* softcap_tanh.c - the float error of the softcaps' tanh
 * (templates/tanh_poly.cl, tanh_slope, one lane) against tanh and
 * 1 / cosh^2 in double, over u = x / softcap from 1e-6 to 20 at 0.3 ppm
 * steps (the odd function's other half is the same by copysign). Prints
 * the worst and RMS error of each in ulps (the spacing of floats at the
 * exact value), and what infinity and NaN give. The polynomial's
 * coefficients: mpmath.chebyfit of (tanh(sqrt(s)) / sqrt(s) - 1) / s
 * over s in [0, 0.55^2], 5 terms (bench/lab/softcap_fit.py).
 *
 *   cc -O2 -o /tmp/softcap_tanh bench/lab/softcap_tanh.c -lm
 *   /tmp/softcap_tanh */
#include <math.h>
#include <stdio.h>

/* The kernel's arithmetic for one lane, e by exp2f: below 0.55 the
 * polynomial and 1 - t^2, else the exponential's branch. */
static float cap_tanh(float u, float *slope)
{
    const float a = fabsf(u);
    const float s = a * a;
    float p = -6.61022783e-3f;
    p = p * s + 2.13093887e-2f;
    p = p * s - 5.39094288e-2f;
    p = p * s + 1.33331137e-1f;
    p = p * s - 3.33333320e-1f;
    float t = a + a * s * p;
    if (a >= 0.55f) {
        const float e = exp2f(a * (-2.0f * 1.44269504088896341f));
        const float r = 1.0f / (1.0f + e);
        t = (1.0f - e) * r;
        *slope = 4.0f * e * r * r;
    } else {
        *slope = 1.0f - t * t;
    }
    return copysignf(t, u);
}

int main(void)
{
    double worst_t = 0, at_t = 0, worst_s = 0, at_s = 0, sq = 0;
    double worst_low = 0, at_low = 0; /* the slope below 0.55: 1 - t^2 */
    long n = 0;
    for (double u = 1e-6; u < 20; u *= 1.0000003) {
        const float uf = (float)u;
        float slope;
        const float t = cap_tanh(uf, &slope);
        const double tr = tanh((double)uf), c = cosh((double)uf);
        const double sr = 1 / (c * c);
        /* in units of the spacing of floats at the exact value */
        const double et = fabs(t - tr) / ldexp(1, ilogb(tr) - 23);
        const double es = fabs(slope - sr) / ldexp(1, ilogb(sr) - 23);
        sq += et * et;
        n++;
        if (et > worst_t) {
            worst_t = et;
            at_t = uf;
        }
        if (es > worst_s) {
            worst_s = es;
            at_s = uf;
        }
        if (uf < 0.55f && es > worst_low) {
            worst_low = es;
            at_low = uf;
        }
    }
    printf("tanh: worst %.2f ulp at u = %.6g, RMS %.2f ulp\n", worst_t, at_t,
           sqrt(sq / (double)n));
    printf("slope: worst %.2f ulp at u = %.6g; below 0.55 %.2f ulp at "
           "u = %.6g\n", worst_s, at_s, worst_low, at_low);
    float slope;
    const float inf_t = cap_tanh(INFINITY, &slope);
    printf("u = inf: tanh %g, slope %g\n", inf_t, slope);
    const float nan_t = cap_tanh(NAN, &slope);
    printf("u = NaN: tanh %g, slope %g\n", nan_t, slope);
    return 0;
}
