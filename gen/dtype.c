/* dtype.c - the storage dtypes on the host: float to f16 and bf16 and
 * back, rounding to nearest even, for references and test inputs. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "op.h"

unsigned short float_to_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t exp = (u >> 23) & 0xffu;
    uint32_t man = u & 0x7fffffu;
    if (exp == 0xff) {
        return (unsigned short)(sign | 0x7c00u | (man ? 0x200u : 0));
    }
    int e = (int)exp - 127 + 15;
    if (e >= 31) {
        return (unsigned short)(sign | 0x7c00u);
    }
    if (e <= 0) {
        if (e < -10) {
            return (unsigned short)sign;
        }
        man |= 0x800000u;
        int shift = 14 - e;
        uint32_t half = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) {
            half++;
        }
        return (unsigned short)(sign | half);
    }
    uint32_t h = ((uint32_t)e << 10) | (man >> 13);
    uint32_t rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) {
        h++; /* may carry into the exponent: still right */
    }
    return (unsigned short)(sign | h);
}

float half_to_float(unsigned short h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t u;
    if (exp == 0) {
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    }
    if (exp == 31) {
        u = sign | 0x7f800000u | (man << 13);
    } else {
        u = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &u, 4);
    return f;
}

unsigned short float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if (isnan(f)) {
        return (unsigned short)((u >> 16) | 0x40u);
    }
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
}

float bf16_to_float(unsigned short h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

float round_to_dtype(float f, enum dtype dt)
{
    switch (dt) {
    case DTYPE_F16:
        return half_to_float(float_to_half(f));
    case DTYPE_BF16:
        return bf16_to_float(float_to_bf16(f));
    default:
        return f;
    }
}
