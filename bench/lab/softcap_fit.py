"""softcap_fit.py - the coefficients of cross_entropy's tanh polynomial
(templates/cross_entropy_common.cl, cap_z_slope): tanh a = a + a^3 P(a^2)
below a = 0.55, P the Chebyshev fit of (tanh(sqrt(s)) / sqrt(s) - 1) / s
over s in [0, 0.55^2]. Prints P's coefficients, highest power first, and
the bound on the relative error of tanh it gives (before rounding; bench/
lab/softcap_tanh.c measures the float arithmetic). Needs mpmath."""
import mpmath as mp

mp.mp.dps = 40
T = mp.mpf("0.55")


def g(s):
    if s == 0:
        return mp.mpf(-1) / 3
    a = mp.sqrt(s)
    return (mp.tanh(a) / a - 1) / s


poly, err = mp.chebyfit(g, [0, T * T], 5, error=True)
print(" ".join(mp.nstr(c, 9) for c in poly))
print("relative error of tanh below", T, "at most", mp.nstr(err * T * T, 3))
