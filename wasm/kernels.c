/* trueno_web: CPU kernels for the "wasm-simd" backend, one small freestanding WebAssembly module.
 *
 * Built by `python wasm/build.py` with -msimd128 into trueno_web/kernels.wasm (shipped in the wheel);
 * `python wasm/build.py --scalar` builds the same source without -msimd128 into build/ (benchmarks).
 * No libc: exp/expm1/log, sin/cos (with their argument reduction), pow and the array API's functions (tan,
 * asin, ..., fmod) are written here, on 4-lane vectors; floor, round, ceil, trunc and sqrt are WebAssembly
 * instructions.
 *
 * Vectors are clang vector extensions (f4 = 4 x f32): with -msimd128 they are v128 and the few
 * operations that need a specific instruction use <wasm_simd128.h>; without it clang lowers them to
 * scalar code, which is the scalar build.
 *
 * Semantics and formulas follow shaders/functions.wgsl (the WebGPU backend), within the catalog's ulp
 * bounds (ops.py, docs/accuracy.md): relu keeps NaN; swish/gelu/mish/hardswish of -inf are -0 (their
 * limit); max/min propagate NaN; exp overflows to +inf, and results below float32's normal range are
 * subnormals, not 0. NaN is tested on the bits.
 *
 * Memory: a first-fit free-list allocator over linear memory above __heap_base (tw_alloc / tw_free /
 * tw_reset), growing memory with memory.grow. Every pointer and count crosses the boundary as i32.
 */

#ifdef __wasm_simd128__
#include <wasm_simd128.h>
#endif

#define EXPORT __attribute__((visibility("default")))
#define INLINE static inline __attribute__((always_inline))

typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned long long u64;
typedef float f4 __attribute__((vector_size(16)));
typedef int i4 __attribute__((vector_size(16)));
typedef u32 u4 __attribute__((vector_size(16)));
typedef float f4u __attribute__((vector_size(16), aligned(4)));

#define F32_MAX 3.4028234663852886e38f
#define F32_INF __builtin_inff()
#define GELU_C 0.7978845608028654f
#define SELU_ALPHA 1.6732632423543772f
#define SELU_SCALE 1.0507009873554805f

/* ------------------------------------------------------------------ vector helpers */

INLINE f4 ld(const float *p) { return *(const f4u *)p; }
INLINE void st(float *p, f4 v) { *(f4u *)p = v; }
INLINE f4 splat(float x) { return (f4){x, x, x, x}; }
INLINE i4 as_i(f4 v) { return (i4)v; }
INLINE f4 as_f(i4 v) { return (f4)v; }

/* m ? a : b, lane by lane (m lanes are all-ones or zero) */
INLINE f4 sel(i4 m, f4 a, f4 b) {
#ifdef __wasm_simd128__
    return (f4)wasm_v128_bitselect((v128_t)a, (v128_t)b, (v128_t)m);
#else
    return (f4){m[0] ? a[0] : b[0], m[1] ? a[1] : b[1], m[2] ? a[2] : b[2], m[3] ? a[3] : b[3]};
#endif
}

INLINE i4 is_nan(f4 x) { return (as_i(x) & 0x7fffffff) > 0x7f800000; }
INLINE f4 vabs(f4 x) { return as_f(as_i(x) & 0x7fffffff); }
INLINE f4 copysign4(f4 mag, f4 sign) { return as_f((as_i(mag) & 0x7fffffff) | (as_i(sign) & (int)0x80000000)); }
INLINE f4 vnan(void) { return splat(__builtin_nanf("")); }
INLINE f4 v1or0(i4 m) { return sel(m, splat(1.0f), splat(0.0f)); }
/* the float with the top 12 significant bits of x: products of two of them are exact */
INLINE f4 hi12(f4 x) { return as_f(as_i(x) & (int)0xfffff000); }

/* floor and sqrt: WebAssembly instructions (f32x4.floor/f32x4.sqrt; the scalar build's f32.floor/f32.sqrt) */
INLINE f4 vfloor(f4 x) {
#ifdef __wasm_simd128__
    return (f4)wasm_f32x4_floor((v128_t)x);
#else
    return (f4){__builtin_floorf(x[0]), __builtin_floorf(x[1]), __builtin_floorf(x[2]), __builtin_floorf(x[3])};
#endif
}
INLINE f4 vsqrt(f4 x) {
#ifdef __wasm_simd128__
    return (f4)wasm_f32x4_sqrt((v128_t)x);
#else
    return (f4){__builtin_sqrtf(x[0]), __builtin_sqrtf(x[1]), __builtin_sqrtf(x[2]), __builtin_sqrtf(x[3])};
#endif
}

/* NaN-propagating max/min (np.max / np.min; WGSL tw_max / tw_min) */
INLINE f4 vmax(f4 a, f4 b) {
#ifdef __wasm_simd128__
    return (f4)wasm_f32x4_max((v128_t)a, (v128_t)b);
#else
    return sel(is_nan(a), a, sel(is_nan(b), b, sel(a > b, a, b)));
#endif
}
INLINE f4 vmin(f4 a, f4 b) {
#ifdef __wasm_simd128__
    return (f4)wasm_f32x4_min((v128_t)a, (v128_t)b);
#else
    return sel(is_nan(a), a, sel(is_nan(b), b, sel(a < b, a, b)));
#endif
}


/* the first `cnt` (< 4) floats of p, the other lanes `fill` */
INLINE f4 ld_tail(const float *p, int cnt, float fill) {
    float t[4] = {fill, fill, fill, fill};
    for (int j = 0; j < cnt; j++) t[j] = p[j];
    return ld(t);
}
INLINE void st_tail(float *p, f4 v, int cnt) {
    for (int j = 0; j < cnt; j++) p[j] = v[j];
}

/* ------------------------------------------------------------------ exp, expm1, log */

#define LOG2E 1.44269504088896341f
#define LN2_HI 0.693359375f
#define LN2_LO -2.12194440e-4f
#define ROUND_MAGIC 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer held in the low bits */

INLINE f4 pow2i(i4 k) { return as_f((k + 127) << 23); } /* 2^k for -126 <= k <= 127 */

typedef struct {
    f4 p; /* e^r - 1, |r| <= ~ln2/2 */
    i4 k; /* t = k ln2 + r */
} exp_parts;

/* Cephes expf's reduction and polynomial (~1 ulp): t = x + lo = k ln2 + r (lo: the low part of a pair, or 0).
 * x is clamped to [-120, 89]: below, s e^t rounds to 0 for any |s| < 2^20 (callers keep s there); above, e^t
 * is +inf. NaN stays NaN. */
INLINE exp_parts exp_split(f4 x, f4 lo) {
    x = sel(x < -120.0f, splat(-120.0f), x);
    x = sel(x > 89.0f, splat(89.0f), x);
    f4 t = x * LOG2E + ROUND_MAGIC;
    f4 kf = t - ROUND_MAGIC;
    i4 k = as_i(t) - as_i(splat(ROUND_MAGIC));
    f4 r = ((x - kf * LN2_HI) - kf * LN2_LO) + lo;
    f4 z = r * r;
    f4 p = (((((1.9875691500E-4f * r + 1.3981999507E-3f) * r + 8.3334519073E-3f) * r + 4.1665795894E-2f) * r +
             1.6666665459E-1f) * r + 5.0000001201E-1f) * z + r;
    return (exp_parts){p, k};
}

/* s e^t from its parts: s (1 + p) scaled by 2^k in two exact steps, so that only the last step rounds (into
 * the subnormals where the result is one) and no intermediate is subnormal */
INLINE f4 scale2k(exp_parts e, f4 s) {
    i4 k1 = e.k >> 1;
    return ((s * (1.0f + e.p)) * pow2i(k1)) * pow2i(e.k - k1);
}

INLINE f4 v_exp(f4 x) { return scale2k(exp_split(x, splat(0.0f)), splat(1.0f)); }

/* |x| < 2^-25, where expm1(x) and tanh(x) round to x (and keep the sign of zero) */
INLINE i4 tiny(f4 x) { return (as_i(x) & 0x7fffffff) < 0x33000000; }

/* e^x - 1 without cancellation: p itself for k = 0, else 2^k p + (2^k - 1) (exact 2^k - 1 for k <= 24) */
INLINE f4 v_expm1(f4 x) {
    exp_parts s = exp_split(x, splat(0.0f));
    i4 k1 = s.k >> 1;
    f4 two_k = pow2i(k1) * pow2i(s.k - k1);
    f4 v = sel(s.k == 0, s.p, two_k * s.p + (two_k - 1.0f));
    v = sel(s.k > 24, scale2k(s, splat(1.0f)), v); /* e^x: 2^128 alone overflows below e^x's own overflow */
    return sel(tiny(x), x, v);
}

/* Cephes logf: x = 2^e m, m in [sqrt(1/2), sqrt(2)); log(0) = -inf, log(x < 0) = NaN, log(inf) = inf */
INLINE f4 v_log(f4 x) {
    i4 sub = (x < 1.17549435e-38f) & (x > 0.0f);
    f4 xs = sel(sub, x * 8388608.0f, x); /* scale subnormals by 2^23 */
    i4 bits = as_i(xs);
    i4 e = ((bits >> 23) & 0xff) - 126 - (sub & 23);
    f4 m = as_f((bits & 0x007fffff) | 0x3f000000); /* [0.5, 1) */
    i4 small = m < 0.707106781186547524f;
    e = e + small; /* small lanes are -1: e - 1 */
    f4 f = sel(small, m + m, m) - 1.0f;
    f4 ef = __builtin_convertvector(e, f4);
    f4 z = f * f;
    f4 y = ((((((((7.0376836292E-2f * f - 1.1514610310E-1f) * f + 1.1676998740E-1f) * f - 1.2420140846E-1f) * f +
                1.4249322787E-1f) * f - 1.6668057665E-1f) * f + 2.0000714765E-1f) * f - 2.4999993993E-1f) * f +
         3.3333331174E-1f) * f * z;
    y = y + ef * LN2_LO;
    y = y - 0.5f * z;
    f4 r = (f + y) + ef * LN2_HI;
    r = sel(x == F32_INF, x, r);
    r = sel(x == 0.0f, splat(-F32_INF), r);
    r = sel((x < 0.0f) | is_nan(x), splat(__builtin_nanf("")), r);
    return r;
}

/* ------------------------------------------------------------------ sin, cos */

/* As shaders/functions.wgsl: |x| <= pi/4 as is; past it x = (4n + q) pi/2 + r by Payne-Hanek in integers (the
 * 24-bit significand times a 96-bit window of the bits of 2/pi: the quadrant and the fraction to 2^-62 for
 * every finite float32), r = rh + rl as a pair, Cephes' sinf/cosf polynomials on |r| <= pi/4: within 1.33 ulp
 * for every float32. Here |x| <= 6434 takes an exact Cody-Waite reduction on vectors instead (3x faster than
 * Payne-Hanek lane by lane): within 1.32 ulp for every float32 up to 6500. */
static const u32 TWO_OVER_PI[8] = {0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u,
                                   0xfe5163abu};

INLINE u32 window_word(u32 q, u32 o) {
    return o ? (TWO_OVER_PI[q] << o) | (TWO_OVER_PI[q + 1] >> (32 - o)) : TWO_OVER_PI[q];
}

/* finite ax > pi/4: the quadrant; *rh + *rl = ax - (4n + q) pi/2 (lane by lane: 64-bit products) */
static u32 trig_reduce_ph(float ax, float *rh, float *rl) {
    union { float f; u32 u; } v = {ax};
    u32 m = (v.u & 0x7fffffu) | 0x800000u; /* ax = m 2^(e - 150) */
    u32 s = (v.u >> 23) - 120u;           /* the window starts at 2/pi's bit e - 151, after 32 zeros */
    u32 q = s >> 5, o = s & 31u;
    u64 w2 = (u64)m * window_word(q + 2, o);
    u64 w1 = (u64)m * window_word(q + 1, o);
    u32 l0 = m * window_word(q, o);
    u32 b = (u32)(w2 >> 32) + (u32)w1;                    /* product bits 32..63 */
    u32 a = (u32)(w1 >> 32) + l0 + (b < (u32)(w2 >> 32)); /* bits 64..95 */
    u32 f = (a << 2) | (b >> 30), g = b << 2;             /* the fraction's bits */
    u32 quadrant = (a >> 30) + (f >> 31);                 /* nearest quadrant: f signed */
    float scale = 2.3283064365386963e-10f;                /* 2^-32 */
    if (f + 32768u < 65536u) {                            /* |fraction| < 2^-17: 16 bits more */
        f = (f << 16) | (g >> 16);
        g <<= 16;
        scale = 3.552713678800501e-15f; /* 2^-48 */
    }
    float fh = (float)(int)(f & 0xffffff00u); /* fraction = (fh + fl) scale */
    float fl = (float)(f & 0xffu) + (float)(g >> 8) * 5.9604644775390625e-8f;
    union { float f; u32 u; } ah = {fh}, h;
    ah.u &= 0xfffff000u;
    float p0 = ah.f * 1.5703125f; /* pi/2 = 1.5703125 + 4.838267923e-4 */
    float rest = (fh - ah.f) * 1.5703125f + (fh * 4.838267923e-4f + fl * 1.5707963267948966f);
    h.f = p0 + rest;
    h.u &= 0xfffff000u;
    *rl = ((p0 - h.f) + rest) * scale;
    *rh = h.f * scale;
    return quadrant & 3u;
}

/* pi/4 < ax <= 6434 (k < 2^12), faster on vectors: Cody-Waite with pi/2 = C1 + ... + C5, C1..C4 of at most
 * 12 bits so that every k Ci is exact; t2 is exact, and d's rounding error e is kept in rl (clang does not
 * reassociate; WGSL compilers may, which is why the shaders use only the reduction above). */
#define CW1 1.5703125f
#define CW2 4.837512969970703e-4f
#define CW3 7.549533620476723e-08f
#define CW4 2.5632829192545614e-12f
#define CW5 6.123234262925839e-17f
INLINE i4 trig_reduce_cw(f4 ax, f4 *rh, f4 *rl) {
    f4 k = (ax * 0.636619772f + ROUND_MAGIC) - ROUND_MAGIC;
    f4 t2 = (ax - k * CW1) - k * CW2; /* exact */
    f4 d = t2 - k * CW3;
    f4 e = (t2 - d) - k * CW3;
    f4 h = hi12(d - (k * CW4 + k * CW5));
    *rh = h;
    *rl = (((d - h) - k * CW4) - k * CW5) + e;
    return __builtin_convertvector(k, i4) & 3;
}

/* sin (k = 0) or cos (k = 1) */
static __attribute__((noinline)) f4 v_sincos(f4 x, int k) {
    f4 ax = vabs(x);
    f4 rh = ax, rl = splat(0.0f);
    i4 q = {0, 0, 0, 0};
    i4 big = (ax > 0.78539816f) & (ax <= F32_MAX);
    if (big[0] | big[1] | big[2] | big[3]) {
        f4 h, l;
        i4 quadrant = trig_reduce_cw(sel(big, ax, splat(1.0f)), &h, &l);
        rh = sel(big, h, rh);
        rl = sel(big, l, rl);
        q = as_i(sel(big, as_f(quadrant), as_f(q)));
        i4 huge = big & (ax > 6434.0f);
        if (huge[0] | huge[1] | huge[2] | huge[3]) {
            for (int j = 0; j < 4; j++) {
                if (huge[j]) {
                    float hj, lj;
                    q[j] = (int)trig_reduce_ph(ax[j], &hj, &lj);
                    rh[j] = hj;
                    rl[j] = lj;
                }
            }
        }
    }
    q = q + k;
    f4 r = rh + rl, z = r * r;
    f4 s = rh + (rl + ((-1.9515295891E-4f * z + 8.3321608736E-3f) * z - 1.6666654611E-1f) * z * r);
    f4 c = ((2.443315711809948E-005f * z - 1.388731625493765E-003f) * z + 4.166664568298827E-002f) * z * z -
           0.5f * z + 1.0f;
    f4 v = sel((q & 1) != 0, c, s);
    v = sel((q & 2) != 0, -v, v);
    if (k == 0) v = sel(as_i(x) < 0, -v, v); /* sin is odd (sin(-0) = -0), cos even */
    return sel((as_i(ax) & 0x7fffffff) >= 0x7f800000, vnan(), v);
}

/* ------------------------------------------------------------------ pow */

/* As shaders/functions.wgsl (which says why): C99 powf / np.power special cases; otherwise
 * |x|^y = 2^(y log2|x|), log2|x| = e + T + log2(1 + r) as a pair (Lh 12 bits, Ll) with r = m I / 64 - 1 exact
 * in integers, y in 12-bit halves so that y log2|x| = th + tl with th exact; within ~3 ulp. */
static const u32 LOG2_I[32] = {64, 61, 59, 58, 56, 55, 53, 52, 51, 49, 48, 47, 46, 90, 88, 86,
                               84, 83, 81, 80, 78, 77, 75, 74, 72, 71, 70, 69, 68, 67, 66, 64};
static const float LOG2_TH[32] = {
    0.0f, 0.06927490234375f, 0.11737060546875f, 0.14202880859375f, 0.192657470703125f, 0.2186279296875f,
    0.2720947265625f, 0.299560546875f, 0.32757568359375f, 0.385284423828125f, 0.4150390625f, 0.445404052734375f,
    0.4764404296875f, -0.491851806640625f, -0.459442138671875f, -0.42626953125f, -0.392303466796875f,
    -0.375030517578125f, -0.33984375f, -0.321929931640625f, -0.285400390625f, -0.26678466796875f,
    -0.22882080078125f, -0.209442138671875f, -0.169921875f, -0.149749755859375f, -0.1292724609375f,
    -0.1085205078125f, -0.08746337890625f, -0.06610107421875f, -0.044403076171875f, 0.0f};
static const float LOG2_TL[32] = {
    0.0f, -1.223990694e-05f, -1.365483058e-05f, -9.803721696e-06f, -1.239276116e-05f, 1.235678792e-05f,
    -1.518112549e-05f, -2.650160980e-07f, -1.025565211e-06f, 5.732056707e-06f, -1.563221190e-06f, 7.095587989e-06f,
    -2.385744438e-06f, -1.289689067e-06f, 1.052003427e-05f, 4.776547939e-06f, -1.395598156e-05f,
    -8.913768397e-06f, -6.252884759e-06f, 1.836753313e-06f, -1.828237259e-06f, -1.872726102e-06f,
    2.110285322e-06f, -1.122695721e-05f, -3.126442380e-06f, 2.636354793e-06f, -1.055600751e-05f,
    -3.948965514e-06f, 5.376559216e-07f, 1.188376064e-05f, 8.956813872e-06f, 0.0f};

#define LN2F 0.6931471805599453f
#define INV_LN2 1.4426950408889634f

/* |x|^y for lanes with finite x != 0 and finite y != 0 (other lanes: anything) */
INLINE f4 pow_core(f4 ax, f4 y) {
    i4 sub = as_i(ax) < 0x800000;
    i4 bits = as_i(sel(sub, ax * 16777216.0f, ax));
    i4 i = (bits >> 18) & 31;
    i4 shifted = i >= 13;
    i4 e = ((bits >> 23) & 0xff) - 127 - (sub & 24) - shifted; /* shifted lanes are -1: e + 1 */
    i4 m = (bits & 0x7fffff) | 0x800000;
    m = as_i(sel(shifted, as_f(m), as_f(m << 1))); /* m 2^-24 in [0.70, 1.41) */
    i4 mi = {(int)LOG2_I[i[0]], (int)LOG2_I[i[1]], (int)LOG2_I[i[2]], (int)LOG2_I[i[3]]};
    f4 th_tab = {LOG2_TH[i[0]], LOG2_TH[i[1]], LOG2_TH[i[2]], LOG2_TH[i[3]]};
    f4 tl_tab = {LOG2_TL[i[0]], LOG2_TL[i[1]], LOG2_TL[i[2]], LOG2_TL[i[3]]};
    i4 n = (i4)((u4)m * (u4)mi - 0x40000000u); /* r 2^30, |n| < 2^25 */
    f4 nh = __builtin_convertvector(n, f4);
    f4 rh = nh * 9.313225746154785e-10f;
    f4 rl = __builtin_convertvector(n - __builtin_convertvector(nh, i4), f4) * 9.313225746154785e-10f;
    f4 ah = hi12(rh);
    f4 p0 = ah * 1.4423828125f, p1 = (rh - ah) * 1.4423828125f;
    f4 p2 = rh * 3.122283961e-4f + rl * INV_LN2;
    f4 r = rh + rl;
    f4 q = r * r * (-0.5f + r * (0.333333333f + r * (-0.25f + r * (0.2f + r * (-0.166666667f + r * 0.142857143f)))));
    f4 ql = q * INV_LN2;
    f4 big = __builtin_convertvector(e, f4) + th_tab; /* exact */
    f4 lh = hi12(((big + p0) + p1) + ql);
    f4 ll = ((((big - lh) + p0) + p1) + ql) + (p2 + tl_tab);
    f4 yh = hi12(y);
    f4 th = yh * lh; /* exact */
    f4 tl = (y - yh) * lh + y * ll;
    f4 t = th + tl;
    i4 over = t > 200.0f, under = t < -200.0f;
    t = sel(over | under, splat(0.0f), t);
    th = sel(over | under, splat(0.0f), th);
    tl = sel(over | under, splat(0.0f), tl);
    f4 k = (t + ROUND_MAGIC) - ROUND_MAGIC;
    f4 d = th - k; /* exact */
    f4 f = d + tl;
    f4 ferr = tl - (f - d);
    f4 u = f * LN2F;
    f4 p = u * (1.0f + u * (0.5f + u * (0.166666667f + u * (0.0416666667f + u * (0.00833333333f +
                                                                                  u * (0.00138888889f + u * 0.000198412698f))))));
    f4 v = 1.0f + (p + ferr * LN2F * (1.0f + p));
    i4 ki = __builtin_convertvector(k, i4);
    i4 k1 = ki >> 1;
    v = (v * pow2i(k1)) * pow2i(ki - k1);
    return sel(over, splat(F32_INF), sel(under, splat(0.0f), v));
}

static __attribute__((noinline)) f4 op_pow(f4 x, f4 y) {
    i4 ix = as_i(x) & 0x7fffffff, iy = as_i(y) & 0x7fffffff;
    f4 ax = vabs(x);
    i4 finite = (ix < 0x7f800000) & (ix != 0) & (iy < 0x7f800000);
    f4 core = pow_core(sel(finite, ax, splat(2.0f)), sel(finite, y, splat(1.0f)));
    f4 fy = vfloor(y);
    i4 integer = fy == y;
    i4 odd = integer & (vfloor(y * 0.5f) != y * 0.5f);
    /* |x| = 0 or inf: 0 or inf by the sign of y (and of log|x|) */
    f4 edge = sel((ix == 0) == (y > 0.0f), splat(0.0f), splat(F32_INF));
    f4 mag = sel(finite, core, edge);
    mag = sel(odd & (as_i(x) < 0), -mag, mag);
    mag = sel((x < 0.0f) & (ix < 0x7f800000) & ~integer, vnan(), mag); /* finite negative base, non-integer y */
    /* y = +-inf: 1 for |x| = 1, else 0 or inf by |x| against 1 */
    f4 yinf = sel(ix == 0x3f800000, splat(1.0f), sel((ax > 1.0f) == (y > 0.0f), splat(F32_INF), splat(0.0f)));
    mag = sel(iy == 0x7f800000, yinf, mag);
    mag = sel((ix > 0x7f800000) | (iy > 0x7f800000), vnan(), mag);
    return sel((iy == 0) | (as_i(x) == 0x3f800000), splat(1.0f), mag); /* even for NaN */
}

/* ------------------------------------------------------------------ the elementwise ops */

INLINE f4 op_relu(f4 x) { return sel((x > 0.0f) | is_nan(x), x, splat(0.0f)); }
INLINE f4 op_leaky_relu(f4 x, float s) { return sel(x > 0.0f, x, x * s); }
INLINE f4 op_elu(f4 x, float a) { return sel(x > 0.0f, x, a * v_expm1(x)); }
/* 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below (no overflow of e^-x, subnormal results kept) */
INLINE f4 op_sigmoid(f4 x) {
    f4 e = v_exp(-vabs(x)), d = 1.0f + e;
    return sel(x < 0.0f, e / d, 1.0f / d);
}
/* Cephes tanhf: an odd polynomial below |x| = 0.625, else 1 - 2 / (e^2|x| + 1) with expm1 (never past 1);
 * +-1 past |x| = 9; x itself below 2^-25 (the sign of zero kept) */
INLINE f4 op_tanh(f4 x) {
    f4 ax = vabs(x), z = x * x;
    f4 poly = ((((-5.70498872745E-3f * z + 2.06390887954E-2f) * z - 5.37397155531E-2f) * z + 1.33314422036E-1f) * z -
               3.33332819422E-1f) * z * x + x;
    f4 e = v_expm1(ax + ax);
    f4 big = copysign4(sel(ax > 9.0f, splat(1.0f), 1.0f - 2.0f / (e + 2.0f)), x);
    return sel(tiny(x), x, sel(ax < 0.625f, poly, big));
}
/* x / (1 + e^-x) for x >= 0; below, x e^x / (1 + e^x) with e^x scaled last (x < -120 gives -0) */
INLINE f4 op_swish(f4 x) {
    exp_parts s = exp_split(-vabs(x), splat(0.0f));
    f4 d = 1.0f + scale2k(s, splat(1.0f));
    return sel(x < 0.0f, scale2k(s, vmax(x, splat(-120.0f)) / d), x / d);
}
/* a * b = *lo + the product exactly (Dekker's product with 12-bit halves) */
INLINE f4 two_prod(f4 a, f4 b, f4 *lo) {
    f4 p = a * b, ah = hi12(a), al = a - ah, bh = hi12(b), bl = b - bh;
    *lo = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
    return p;
}
/* gelu's exponent t = 2 sqrt(2/pi) v (1 + k v^2) as th + *tl (|v| <= 20), as shaders/functions.wgsl (which says
 * why): k = 0.044715 and the constant as float32 + the rest */
#define GELU_2C 1.5957691669464111f
#define GELU_2C_LO -4.534068054340423e-08f
#define GELU_K 0.044714998453855515f
#define GELU_K_LO 1.5461444347053543e-09f
INLINE f4 gelu_exponent(f4 v, f4 *tl) {
    f4 sl, ql, cvl, l;
    f4 s = two_prod(v, v, &sl);
    f4 q = two_prod(splat(GELU_K), s, &ql);
    ql = ql + (GELU_K * sl + GELU_K_LO * s);
    f4 wh = hi12(1.0f + q);
    f4 wl = ((1.0f - wh) + q) + ql; /* 1 + q = wh + wl: 1 - wh is exact */
    f4 cv = two_prod(splat(GELU_2C), v, &cvl);
    f4 t = two_prod(cv, wh, &l);
    *tl = l + (cv * wl + (cvl + GELU_2C_LO * v) * wh);
    return t;
}
/* 0.5 x (1 + tanh(u)) = x / (1 + e^-t), t = 2u, for x >= 0; x e^t / (1 + e^t) below (no cancellation in
 * 1 + tanh, e^t scaled last); the cubic on x clamped to [-20, 20] (gelu is x or -0 long before: no overflow) */
static __attribute__((noinline)) f4 op_gelu(f4 x) {
    f4 v = sel(x < -20.0f, splat(-20.0f), sel(x > 20.0f, splat(20.0f), x));
    f4 tl;
    f4 th = gelu_exponent(v, &tl);
    i4 neg = x < 0.0f;
    exp_parts s = exp_split(-vabs(th), sel(neg, tl, -tl));
    f4 d = 1.0f + scale2k(s, splat(1.0f));
    return sel(neg, scale2k(s, v / d), x / d);
}
/* x tanh(softplus(x)) = x n / (n + 2), n = e^x (e^x + 2); for x < 0, x (e^x + 2) / (n + 2) times e^x scaled
 * last (x < -120 gives -0); past x = 20 it is x in float32 */
static __attribute__((noinline)) f4 op_mish(f4 x) {
    f4 v = sel(x < -120.0f, splat(-120.0f), sel(x > 20.0f, splat(20.0f), x));
    exp_parts s = exp_split(v, splat(0.0f));
    f4 e = scale2k(s, splat(1.0f)), n = e * (e + 2.0f);
    f4 neg = scale2k(s, v * (e + 2.0f) / (n + 2.0f));
    return sel(x > 20.0f, x, sel(x < 0.0f, neg, x * (n / (n + 2.0f))));
}
INLINE f4 op_selu(f4 x) { return SELU_SCALE * sel(x > 0.0f, x, SELU_ALPHA * v_expm1(x)); }
/* x past 3, -0 below -3, else x (x + 3) / 6: no x * 6 to overflow */
INLINE f4 op_hardswish(f4 x) {
    f4 mid = x * (x + 3.0f) / 6.0f;
    return sel(x >= 3.0f, x, sel(x <= -3.0f, as_f(as_i(x) & (int)0x80000000), mid));
}
INLINE f4 op_clip(f4 x, float lo, float hi) {
    f4 low = sel(x < lo, splat(lo), x);
    f4 r = sel(low > hi, splat(hi), low);
    return sel(is_nan(splat(lo)) | is_nan(splat(hi)), splat(lo + hi), r); /* a NaN bound gives NaN, as in NumPy */
}

/* ------------------------------------------------------------------ the array API's elementwise functions */

/* The catalog's rows after floor and after div, step for step as the block of the same name in
 * shaders/functions.wgsl (which says why): on exp_split, v_expm1, v_exp, v_log, pow's pair log2 and sin's and
 * cos's reduction; round, ceil and trunc are WebAssembly instructions. */
#define PIO2_HI 1.5707963705062866f /* pi/2 as float32 + the rest */
#define PIO2_LO -4.371138828673793e-08f
#define PI_HI 3.1415927410125732f
#define PI_LO -8.742277657347586e-08f
#define PIO4_HI 0.7853981852531433f
#define PIO4_LO -2.1855694143368964e-08f
#define LN2_PAIR_HI 0.6931471824645996f
#define LN2_PAIR_LO -1.9046542121259336e-09f

INLINE i4 seli(i4 m, i4 a, i4 b) { return (a & m) | (b & ~m); }

/* the shared pieces, each once in the module (the module stays small: the functions below call them) */
#define SMALL static __attribute__((noinline, minsize))
SMALL f4 log_n(f4 x) { return v_log(x); }
SMALL f4 exp_n(f4 x) { return v_exp(x); }
SMALL f4 expm1_n(f4 x) { return v_expm1(x); }

/* round (half to even), ceil, trunc: f32x4.nearest/ceil/trunc (the scalar build's f32 instructions) */
INLINE f4 vround(f4 x) {
#ifdef __wasm_simd128__
    return (f4)wasm_f32x4_nearest((v128_t)x);
#else
    return (f4){__builtin_rintf(x[0]), __builtin_rintf(x[1]), __builtin_rintf(x[2]), __builtin_rintf(x[3])};
#endif
}
INLINE f4 vceil(f4 x) {
#ifdef __wasm_simd128__
    return (f4)wasm_f32x4_ceil((v128_t)x);
#else
    return (f4){__builtin_ceilf(x[0]), __builtin_ceilf(x[1]), __builtin_ceilf(x[2]), __builtin_ceilf(x[3])};
#endif
}
INLINE f4 vtrunc(f4 x) {
#ifdef __wasm_simd128__
    return (f4)wasm_f32x4_trunc((v128_t)x);
#else
    return (f4){__builtin_truncf(x[0]), __builtin_truncf(x[1]), __builtin_truncf(x[2]), __builtin_truncf(x[3])};
#endif
}
/* np.sign: +-1, +0 for +-0, NaN stays NaN */
SMALL f4 op_sign(f4 x) {
    f4 s = as_f((as_i(x) & (int)0x80000000) | 0x3f800000);
    return sel(is_nan(x), x, sel((as_i(x) & 0x7fffffff) == 0, splat(0.0f), s));
}

/* log(1 + x) = log(m) + log1p(t): t = x (m = 1) below |x| = 2^-9, else m = 1 + x to 12 bits, t = ((1 - m) + x) / m */
SMALL f4 v_log1p(f4 x) {
    i4 series = vabs(x) < 0.001953125f;
    f4 u = 1.0f + x;
    f4 m = sel(series, splat(1.0f), sel(x <= -0.5f, u, hi12(u)));
    f4 t = sel(series, x, ((1.0f - m) + x) / m);
    f4 r = log_n(m) + t * (1.0f - t * (0.5f - t * (0.33333334f - t * 0.25f)));
    r = sel(x > 4194304.0f, log_n(x) + 1.0f / x, r);
    r = sel(x == -1.0f, splat(-F32_INF), r);
    r = sel(x < -1.0f, vnan(), r);
    return sel(tiny(x) | is_nan(x), x, r);
}

/* log2|x| = the result + *lo for finite x != 0 (pow_core's first steps) */
SMALL f4 log2_pair(f4 ax, f4 *lo) {
    i4 sub = as_i(ax) < 0x800000;
    i4 bits = as_i(sel(sub, ax * 16777216.0f, ax));
    i4 i = (bits >> 18) & 31;
    i4 shifted = i >= 13;
    i4 e = ((bits >> 23) & 0xff) - 127 - (sub & 24) - shifted;
    i4 m = (bits & 0x7fffff) | 0x800000;
    m = as_i(sel(shifted, as_f(m), as_f(m << 1)));
    i4 mi = {(int)LOG2_I[i[0]], (int)LOG2_I[i[1]], (int)LOG2_I[i[2]], (int)LOG2_I[i[3]]};
    f4 th_tab = {LOG2_TH[i[0]], LOG2_TH[i[1]], LOG2_TH[i[2]], LOG2_TH[i[3]]};
    f4 tl_tab = {LOG2_TL[i[0]], LOG2_TL[i[1]], LOG2_TL[i[2]], LOG2_TL[i[3]]};
    i4 n = (i4)((u4)m * (u4)mi - 0x40000000u);
    f4 nh = __builtin_convertvector(n, f4);
    f4 rh = nh * 9.313225746154785e-10f;
    f4 rl = __builtin_convertvector(n - __builtin_convertvector(nh, i4), f4) * 9.313225746154785e-10f;
    f4 ah = hi12(rh);
    f4 p0 = ah * 1.4423828125f, p1 = (rh - ah) * 1.4423828125f;
    f4 p2 = rh * 3.122283961e-4f + rl * INV_LN2;
    f4 r = rh + rl;
    f4 q = r * r * (-0.5f + r * (0.333333333f + r * (-0.25f + r * (0.2f + r * (-0.166666667f + r * 0.142857143f)))));
    f4 ql = q * INV_LN2;
    f4 big = __builtin_convertvector(e, f4) + th_tab;
    f4 lh = hi12(((big + p0) + p1) + ql);
    *lo = ((((big - lh) + p0) + p1) + ql) + (p2 + tl_tab);
    return lh;
}
/* log2, log10: -inf at +-0, NaN below 0, +inf at +inf */
INLINE f4 log_special(f4 x, f4 r) {
    r = sel(x == F32_INF, x, r);
    r = sel(x == 0.0f, splat(-F32_INF), r);
    return sel((x < 0.0f) | is_nan(x), vnan(), r);
}
SMALL f4 v_log2(f4 x) {
    f4 lo, hi = log2_pair(vabs(x), &lo);
    return log_special(x, hi + lo);
}
SMALL f4 v_log10(f4 x) {
    f4 lo, hi = log2_pair(vabs(x), &lo);
    return log_special(x, hi * 0.301025390625f + (hi * 4.605039066518657e-06f + lo * 0.3010300099849701f));
}

/* e^a / 2 for 88 <= a (<= 90): 2^127 e^(a - 88.75 + 0.0271608885), a - 88.75 exact */
SMALL f4 exp_half_big(f4 a) {
    exp_parts s = exp_split(vmin(a, splat(90.0f)) - 88.75f, splat(0.02716088853776455f));
    s.k = s.k + 127;
    return scale2k(s, splat(1.0f));
}
SMALL f4 v_sinh(f4 x) {
    f4 a = vabs(x);
    f4 e = expm1_n(vmin(a, splat(88.0f)));
    f4 r = sel(a >= 88.0f, exp_half_big(a), 0.5f * (e + e / (e + 1.0f)));
    return sel(tiny(x) | is_nan(x), x, copysign4(r, x));
}
SMALL f4 v_cosh(f4 x) {
    f4 a = vabs(x), q = vmin(a, splat(88.0f));
    f4 e = expm1_n(q), ex = exp_n(q);
    f4 r = sel(a < 1.0f, 1.0f + e * e / (2.0f * e + 2.0f), 0.5f * ex + 0.5f / ex);
    r = sel(a >= 88.0f, exp_half_big(a), r);
    return sel(is_nan(x), x, r);
}

/* v_sincos's reduction of finite ax: the quadrant, *rh + *rl = the rest (|r| <= pi/4); other lanes as they are */
SMALL i4 trig_reduce4(f4 ax, f4 *rh, f4 *rl) {
    i4 q = {0, 0, 0, 0};
    *rh = ax;
    *rl = splat(0.0f);
    i4 big = (ax > 0.78539816f) & (ax <= F32_MAX);
    if (big[0] | big[1] | big[2] | big[3]) {
        f4 h, l;
        i4 quadrant = trig_reduce_cw(sel(big, ax, splat(1.0f)), &h, &l);
        *rh = sel(big, h, *rh);
        *rl = sel(big, l, *rl);
        q = seli(big, quadrant, q);
        i4 huge = big & (ax > 6434.0f);
        for (int j = 0; j < 4; j++) {
            if (huge[j]) {
                float hj, lj;
                q[j] = (int)trig_reduce_ph(ax[j], &hj, &lj);
                (*rh)[j] = hj;
                (*rl)[j] = lj;
            }
        }
    }
    return q;
}
/* Cephes tanf's polynomial on r = rh + rl; -1 / tan(r) in odd quadrants */
SMALL f4 v_tan(f4 x) {
    f4 rh, rl;
    i4 q = trig_reduce4(vabs(x), &rh, &rl);
    f4 r = rh + rl, z = r * r;
    f4 t = rh + (rl + (((((9.38540185543E-3f * z + 3.11992232697E-3f) * z + 2.44301354525E-2f) * z +
                         5.34112807005E-2f) * z + 1.33387994085E-1f) * z + 3.33331568548E-1f) * z * r);
    f4 v = sel((q & 1) != 0, -1.0f / t, t);
    v = sel(as_i(x) < 0, -v, v);
    return sel((as_i(x) & 0x7fffffff) >= 0x7f800000, vnan(), v);
}

/* Cephes asinf's polynomial: asin(a) for 0 <= a <= 0.5 */
SMALL f4 asin_poly(f4 a) {
    f4 z = a * a;
    return ((((4.2163199048E-2f * z + 2.4181311049E-2f) * z + 4.5470025998E-2f) * z + 7.4953002686E-2f) * z +
            1.6666752422E-1f) * z * a + a;
}
SMALL f4 v_asin(f4 x) {
    f4 a = vabs(x);
    f4 big = PIO2_HI + (PIO2_LO - 2.0f * asin_poly(vsqrt(0.5f * (1.0f - a))));
    f4 r = copysign4(sel(a > 0.5f, big, asin_poly(a)), x);
    r = sel(a > 1.0f, vnan(), r);
    return sel(tiny(x) | is_nan(x), x, r);
}
SMALL f4 v_acos(f4 x) {
    f4 a = vabs(x);
    f4 p = 2.0f * asin_poly(vsqrt(0.5f * (1.0f - a)));
    f4 far = sel(x < 0.0f, PI_HI + (PI_LO - p), p);
    f4 r = sel(a > 0.5f, far, PIO2_HI + (PIO2_LO - asin_poly(x)));
    return sel((a > 1.0f) | is_nan(x), vnan(), r);
}
/* Cephes atanf for a >= 0: pi/2 + atan(-1 / a) past tan(3pi/8), pi/4 + atan((a - 1) / (a + 1)) past tan(pi/8) */
SMALL f4 atan_pos(f4 a) {
    i4 far = a > 2.414213562373095f, mid = a > 0.4142135623730950f;
    f4 t = sel(far, -1.0f / a, sel(mid, (a - 1.0f) / (a + 1.0f), a));
    f4 hi = sel(far, splat(PIO2_HI), sel(mid, splat(PIO4_HI), splat(0.0f)));
    f4 lo = sel(far, splat(PIO2_LO), sel(mid, splat(PIO4_LO), splat(0.0f)));
    f4 z = t * t;
    f4 p = (((8.05374449538e-2f * z - 1.38776856032E-1f) * z + 1.99777106478E-1f) * z - 3.33329491539E-1f) * z * t;
    return hi + ((lo + p) + t);
}
SMALL f4 v_atan(f4 x) { return sel(tiny(x) | is_nan(x), x, copysign4(atan_pos(vabs(x)), x)); }
SMALL f4 v_asinh(f4 x) {
    f4 a = vabs(x), q = vmin(a, splat(4096.0f)), t = q * q, s = vsqrt(t + 1.0f);
    f4 r = sel(a > 2.0f, log_n(2.0f * q + 1.0f / (q + s)), v_log1p(q + t / (1.0f + s)));
    r = sel(a > 4096.0f, log_n(a) + LN2_PAIR_HI, r);
    return sel(tiny(x) | is_nan(x), x, copysign4(r, x));
}
SMALL f4 v_acosh(f4 x) {
    f4 q = vmin(x, splat(4096.0f)), t = q - 1.0f;
    f4 r = sel(x > 2.0f, log_n(2.0f * q - 1.0f / (q + vsqrt(q * q - 1.0f))), v_log1p(t + vsqrt(t * (2.0f + t))));
    r = sel(x > 4096.0f, log_n(x) + LN2_PAIR_HI, r);
    return sel((x < 1.0f) | is_nan(x), vnan(), r);
}
SMALL f4 v_atanh(f4 x) {
    f4 a = vabs(x), d = 1.0f - a;
    f4 r = 0.5f * v_log1p(sel(a >= 0.5f, 2.0f * a / d, 2.0f * a + 2.0f * a * a / d));
    r = sel(a > 1.0f, vnan(), copysign4(r, x));
    return sel(tiny(x) | is_nan(x), x, r);
}

/* atan2(a, b): atan(|a| / |b|), pi - it where b's sign bit is set, a's sign; 0 / 0 is 0, inf / inf pi/4 */
SMALL f4 v_atan2(f4 a, f4 b) {
    f4 ay = vabs(a), ax = vabs(b);
    f4 t = sel(ay == 0.0f, splat(0.0f), atan_pos(ay / ax));
    t = sel((ay == F32_INF) & (ax == F32_INF), splat(PIO4_HI), t);
    f4 r = sel(as_i(b) < 0, PI_HI + (PI_LO - t), t);
    return sel(is_nan(a) | is_nan(b), vnan(), copysign4(r, a));
}
/* hypot: both scaled by 2^k (k from the larger's exponent, two exact steps), sqrt(x^2 + y^2), scaled back */
SMALL f4 v_hypot(f4 a, f4 b) {
    i4 ua = as_i(a) & 0x7fffffff, ub = as_i(b) & 0x7fffffff;
    i4 hi = seli(ua > ub, ua, ub), lo = seli(ua > ub, ub, ua);
    i4 k = 127 - (hi >> 23), k1 = k >> 1;
    f4 s1 = pow2i(k1), s2 = pow2i(k - k1);
    f4 x = (as_f(hi) * s1) * s2, y = (as_f(lo) * s1) * s2;
    f4 r = (vsqrt(x * x + y * y) * pow2i(-k1)) * pow2i(k1 - k);
    r = sel((ua > 0x7f800000) | (ub > 0x7f800000), vnan(), r);
    return sel((ua == 0x7f800000) | (ub == 0x7f800000), splat(F32_INF), r);
}
/* np.logaddexp: max + log1p(e^d), d = -|a - b|; above d = -0.88 (the smaller term) max + ln2 + log1p(expm1(d) / 2),
 * ln2 a pair (max + its head exact near -ln2); a + ln2 where a == b */
SMALL f4 v_logaddexp(f4 a, f4 b) {
    f4 m = vmax(a, b), d = -vabs(a - b);
    f4 r = sel(d > -0.88f, ((m + LN2_PAIR_HI) + LN2_PAIR_LO) + v_log1p(0.5f * expm1_n(d)), m + v_log1p(exp_n(d)));
    r = sel(a == b, (a + LN2_PAIR_HI) + LN2_PAIR_LO, r);
    return sel(is_nan(a) | is_nan(b), vnan(), r);
}
/* the next float32 after a toward b, on the bits: b where a == b, the smallest subnormal of b's sign after 0 */
SMALL f4 op_nextafter(f4 a, f4 b) {
    i4 ua = as_i(a), ub = as_i(b);
    i4 ma = ua & 0x7fffffff, mb = ub & 0x7fffffff;
    i4 ka = seli(ua < 0, -ma, ma), kb = seli(ub < 0, -mb, mb);
    i4 away = (ka < kb) == (ua >= 0);
    i4 r = seli(ma == 0, (ub & (int)0x80000000) | 1, ua - 1 - 2 * away); /* away lanes are -1: + 1 */
    r = seli(ka == kb, ub, r);
    return sel((ma > 0x7f800000) | (mb > 0x7f800000), vnan(), as_f(r));
}
/* fmod(a, b) exactly, on the bits (musl's fmodf), one lane */
SMALL float fmod1(float a, float b) {
    union { float f; u32 u; } x = {a}, y = {b};
    u32 sx = x.u & 0x80000000u, ix = x.u & 0x7fffffffu, iy = y.u & 0x7fffffffu;
    if (iy == 0 || ix >= 0x7f800000u || iy > 0x7f800000u) return __builtin_nanf("");
    if (ix < iy) return a;
    int ex = (int)(ix >> 23), ey = (int)(iy >> 23);
    u32 mx = (ix & 0x7fffffu) | 0x800000u, my = (iy & 0x7fffffu) | 0x800000u;
    if (!ex) {
        u32 sh = (u32)__builtin_clz(ix) - 8;
        mx = ix << sh;
        ex = 1 - (int)sh;
    }
    if (!ey) {
        u32 sh = (u32)__builtin_clz(iy) - 8;
        my = iy << sh;
        ey = 1 - (int)sh;
    }
    for (; ex > ey; ex--) {
        if (mx >= my) mx -= my;
        if (!mx) break;
        mx <<= 1;
    }
    if (mx >= my) mx -= my;
    if (!mx) {
        x.u = sx;
        return x.f;
    }
    u32 sh = (u32)__builtin_clz(mx) - 8;
    mx <<= sh;
    ex -= (int)sh;
    x.u = (ex > 0 ? (mx - 0x800000u) | ((u32)ex << 23) : mx >> (1 - ex)) | sx;
    return x.f;
}
INLINE f4 vfmod(f4 a, f4 b) { return (f4){fmod1(a[0], b[0]), fmod1(a[1], b[1]), fmod1(a[2], b[2]), fmod1(a[3], b[3])}; }
/* np.remainder: fmod, plus b where its sign is not b's; a zero has b's sign */
SMALL f4 v_remainder(f4 a, f4 b) {
    f4 m = vfmod(a, b);
    f4 r = sel((as_i(m) ^ as_i(b)) < 0, m + b, m);
    return sel((as_i(m) & 0x7fffffff) == 0, as_f(as_i(b) & (int)0x80000000), r);
}
/* np.floor_divide: (a - fmod) / b, less 1 where the fmod's sign is not b's, floored (up where more than 1/2 was
 * left); 0 with the sign of a / b where that is 0 or a finite a is divided by +-inf; a / b where b is 0 or an
 * infinite a is divided by a finite b (the standard's special values) */
SMALL f4 v_floor_divide(f4 a, f4 b) {
    f4 m = vfmod(a, b);
    i4 differ = ((as_i(m) ^ as_i(b)) < 0) & ((as_i(m) & 0x7fffffff) != 0);
    f4 q = (a - m) / b;
    f4 d = sel(differ, q - 1.0f, q);
    f4 f = vfloor(d);
    i4 ea = as_i(a) & 0x7fffffff, eb = as_i(b) & 0x7fffffff;
    f4 r = sel(d - f > 0.5f, f + 1.0f, f);
    r = sel((d == 0.0f) | ((ea < 0x7f800000) & (eb == 0x7f800000)), as_f((as_i(a) ^ as_i(b)) & (int)0x80000000), r);
    return sel((eb == 0) | ((ea == 0x7f800000) & (eb < 0x7f800000)), a / b, r);
}

/* the functions above as exports: one loop each for one and two inputs, calling through a pointer 4 lanes at a
 * time (the module stays small, as `draw` for the random numbers) */
SMALL f4 op_round(f4 x) { return vround(x); }
SMALL f4 op_ceil(f4 x) { return vceil(x); }
SMALL f4 op_trunc(f4 x) { return vtrunc(x); }
SMALL f4 op_reciprocal(f4 x) { return 1.0f / x; }
SMALL f4 op_positive(f4 x) { return x; }
SMALL f4 op_imag(f4 x) { (void)x; return (f4){0.0f, 0.0f, 0.0f, 0.0f}; }
SMALL f4 op_copysign(f4 a, f4 b) { return copysign4(a, b); }
typedef f4 (*map1_fn)(f4 x);
typedef f4 (*map2_fn)(f4 a, f4 b);
static __attribute__((noinline)) void map1(map1_fn f, const float *xp, float *yp, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) st(yp + i, f(ld(xp + i)));
    if (i < n) st_tail(yp + i, f(ld_tail(xp + i, n - i, 0.0f)), n - i);
}
static __attribute__((noinline)) void map2(map2_fn f, const float *ap, const float *bp, float *yp, int n) {
    int i = 0;
    for (; i + 4 <= n; i += 4) st(yp + i, f(ld(ap + i), ld(bp + i)));
    if (i < n) st_tail(yp + i, f(ld_tail(ap + i, n - i, 1.0f), ld_tail(bp + i, n - i, 1.0f)), n - i);
}
#define MAP1(NAME, FN) \
    EXPORT void tw_##NAME(const float *xp, float *yp, int n) { map1(FN, xp, yp, n); }
#define MAP2(NAME, FN) \
    EXPORT void tw_##NAME(const float *ap, const float *bp, float *yp, int n) { map2(FN, ap, bp, yp, n); }

#define P1(a) , float a
#define P2(a, b) , float a, float b

#define UNARY(NAME, PARAMS, EXPR)                                                   \
    EXPORT void tw_##NAME(const float *xp, float *yp, int n PARAMS) {               \
        int i = 0;                                                                  \
        for (; i + 8 <= n; i += 8) {                                                \
            f4 x = ld(xp + i);                                                      \
            f4 y0 = EXPR;                                                           \
            x = ld(xp + i + 4);                                                     \
            f4 y1 = EXPR;                                                           \
            st(yp + i, y0);                                                         \
            st(yp + i + 4, y1);                                                     \
        }                                                                           \
        for (; i + 4 <= n; i += 4) {                                                \
            f4 x = ld(xp + i);                                                      \
            st(yp + i, EXPR);                                                       \
        }                                                                           \
        if (i < n) {                                                                \
            f4 x = ld_tail(xp + i, n - i, 0.0f);                                    \
            st_tail(yp + i, EXPR, n - i);                                           \
        }                                                                           \
    }

UNARY(relu, , op_relu(x))
UNARY(leaky_relu, P1(slope), op_leaky_relu(x, slope))
UNARY(elu, P1(alpha), op_elu(x, alpha))
UNARY(sigmoid, , op_sigmoid(x))
UNARY(tanh, , op_tanh(x))
UNARY(swish, , op_swish(x))
UNARY(gelu, , op_gelu(x))
UNARY(mish, , op_mish(x))
UNARY(selu, , op_selu(x))
UNARY(hardswish, , op_hardswish(x))
UNARY(clip, P2(lo, hi), op_clip(x, lo, hi))
UNARY(scale, P1(s), x * s)
UNARY(exp, , v_exp(x))
UNARY(log, , v_log(x))
UNARY(neg, , -x)
UNARY(abs, , vabs(x))
UNARY(sqrt, , vsqrt(x)) /* NaN below 0, -0 at -0 (IEEE) */
UNARY(rsqrt, , 1.0f / vsqrt(x))
UNARY(square, , x * x)
UNARY(sin, , v_sincos(x, 0))
UNARY(cos, , v_sincos(x, 1))
UNARY(floor, , vfloor(x))
UNARY(copy, , x)
MAP1(round, op_round)
MAP1(ceil, op_ceil)
MAP1(trunc, op_trunc)
MAP1(sign, op_sign)
MAP1(log1p, v_log1p)
MAP1(expm1, expm1_n)
MAP1(log2, v_log2)
MAP1(log10, v_log10)
MAP1(sinh, v_sinh)
MAP1(cosh, v_cosh)
MAP1(tan, v_tan)
MAP1(asin, v_asin)
MAP1(acos, v_acos)
MAP1(atan, v_atan)
MAP1(asinh, v_asinh)
MAP1(acosh, v_acosh)
MAP1(atanh, v_atanh)
MAP1(reciprocal, op_reciprocal)
MAP1(positive, op_positive)
MAP1(real, op_positive)
MAP1(conj, op_positive)
MAP1(imag, op_imag)

#define BINARY(NAME, OP)                                                            \
    EXPORT void tw_##NAME(const float *ap, const float *bp, float *yp, int n) {     \
        int i = 0;                                                                  \
        for (; i + 8 <= n; i += 8) {                                                \
            f4 y0 = ld(ap + i) OP ld(bp + i);                                       \
            f4 y1 = ld(ap + i + 4) OP ld(bp + i + 4);                               \
            st(yp + i, y0);                                                         \
            st(yp + i + 4, y1);                                                     \
        }                                                                           \
        for (; i + 4 <= n; i += 4) st(yp + i, ld(ap + i) OP ld(bp + i));            \
        for (; i < n; i++) yp[i] = ap[i] OP bp[i];                                  \
    }

BINARY(add, +)
BINARY(sub, -)
BINARY(mul, *)
BINARY(div, /)

/* elementwise ops of two inputs written as functions of vectors */
#define BINARY_FN(NAME, EXPR)                                                       \
    EXPORT void tw_##NAME(const float *ap, const float *bp, float *yp, int n) {     \
        int i = 0;                                                                  \
        for (; i + 4 <= n; i += 4) {                                                \
            f4 a = ld(ap + i), b = ld(bp + i);                                      \
            st(yp + i, EXPR);                                                       \
        }                                                                           \
        for (; i < n; i++) {                                                        \
            f4 a = splat(ap[i]), b = splat(bp[i]);                                  \
            yp[i] = (EXPR)[0];                                                      \
        }                                                                           \
    }

BINARY_FN(pow, op_pow(a, b))
BINARY_FN(maximum, vmax(a, b))
BINARY_FN(minimum, vmin(a, b))
MAP2(atan2, v_atan2)
MAP2(hypot, v_hypot)
MAP2(logaddexp, v_logaddexp)
MAP2(copysign, op_copysign)
MAP2(nextafter, op_nextafter)
MAP2(remainder, v_remainder)
MAP2(floor_divide, v_floor_divide)

/* ------------------------------------------------------------------ other dtypes (trueno_web/dtypes.py)
   int32 (_i32), uint32 (_u32) and bool (_bool: u32 words of 0 or 1), as shaders/functions_int.wgsl; plain
   loops, which clang vectorises. Signed arithmetic goes through u32 (wrapping, where C's int would overflow). */
typedef int s32;
#define LOOP _Pragma("clang loop unroll(disable) interleave_count(1)") /* vectorised, not unrolled: small */
#define IMAP1(NAME, TX, TY, EXPR)                                                   \
    EXPORT void tw_##NAME(const TX *xp, TY *yp, int n) {                            \
        LOOP for (int i = 0; i < n; i++) {                                          \
            TX x = xp[i];                                                           \
            yp[i] = (TY)(EXPR);                                                     \
        }                                                                           \
    }
#define IMAP2(NAME, TX, TY, EXPR)                                                   \
    EXPORT void tw_##NAME(const TX *ap, const TX *bp, TY *yp, int n) {              \
        LOOP for (int i = 0; i < n; i++) {                                          \
            TX a = ap[i], b = bp[i];                                                \
            yp[i] = (TY)(EXPR);                                                     \
        }                                                                           \
    }
#define WHERE(NAME, T)                                                              \
    EXPORT void tw_##NAME(const u32 *cp, const T *ap, const T *bp, T *yp, int n) {  \
        LOOP for (int i = 0; i < n; i++) yp[i] = cp[i] ? ap[i] : bp[i];             \
    }

/* comparisons give bool; NaN compares false except in ne (IEEE: != is unordered) */
#define COMPARISONS(SUF, T)                                                         \
    IMAP2(lt##SUF, T, u32, a < b)                                                    \
    IMAP2(le##SUF, T, u32, a <= b)                                                   \
    IMAP2(gt##SUF, T, u32, a > b)                                                    \
    IMAP2(ge##SUF, T, u32, a >= b)                                                   \
    IMAP2(eq##SUF, T, u32, a == b)                                                   \
    IMAP2(ne##SUF, T, u32, a != b)
COMPARISONS(, float)
WHERE(where, float)

/* arithmetic, bitwise ops and shifts of one integer dtype (a shift by 32 or more, or a negative one,
   shifts every bit out) */
#define INTEGERS(SUF, T)                                                            \
    IMAP2(add##SUF, T, T, (u32)a + (u32)b)                                           \
    IMAP2(sub##SUF, T, T, (u32)a - (u32)b)                                           \
    IMAP2(mul##SUF, T, T, (u32)a * (u32)b)                                           \
    IMAP1(neg##SUF, T, T, 0u - (u32)x)                                               \
    IMAP1(square##SUF, T, T, (u32)x * (u32)x)                                        \
    IMAP2(maximum##SUF, T, T, a > b ? a : b)                                         \
    IMAP2(minimum##SUF, T, T, a < b ? a : b)                                         \
    IMAP1(copy##SUF, T, T, x)                                                        \
    COMPARISONS(SUF, T)                                                             \
    WHERE(where##SUF, T)                                                            \
    IMAP2(bitwise_and##SUF, T, T, a & b)                                             \
    IMAP2(bitwise_or##SUF, T, T, a | b)                                              \
    IMAP2(bitwise_xor##SUF, T, T, a ^ b)                                             \
    IMAP1(bitwise_invert##SUF, T, T, ~x)                                             \
    IMAP2(bitwise_left_shift##SUF, T, T, (u32)b < 32u ? (u32)a << b : 0u)
INTEGERS(_i32, s32)
INTEGERS(_u32, u32)
IMAP1(abs_i32, s32, s32, x < 0 ? 0u - (u32)x : (u32)x)
IMAP1(abs_u32, u32, u32, x)
IMAP2(bitwise_right_shift_i32, s32, s32, a >> ((u32)b < 32u ? b : 31))
IMAP2(bitwise_right_shift_u32, u32, u32, b < 32u ? a >> b : 0u)

/* rounding an integer is itself; Python's // and % on integers: floor's signs, 0 for b = 0 (as NumPy), and the
   int32 minimum // -1 wraps to itself (C's / and % would trap there) */
INLINE s32 floordiv_i32(s32 a, s32 b) {
    if (b == 0) return 0;
    if (a == (s32)0x80000000u && b == -1) return a;
    s32 q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
INLINE s32 rem_i32(s32 a, s32 b) {
    if (b == 0 || b == -1) return 0;
    s32 r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
#define ROUNDING(SUF, T)                                                            \
    IMAP1(floor##SUF, T, T, x)                                                      \
    IMAP1(round##SUF, T, T, x)                                                      \
    IMAP1(ceil##SUF, T, T, x)                                                       \
    IMAP1(trunc##SUF, T, T, x)                                                      \
    IMAP1(positive##SUF, T, T, x)                                                   \
    IMAP1(real##SUF, T, T, x)                                                       \
    IMAP1(conj##SUF, T, T, x)                                                       \
    IMAP1(imag##SUF, T, T, x * 0)
ROUNDING(_i32, s32)
ROUNDING(_u32, u32)
IMAP1(sign_i32, s32, s32, (x > 0) - (x < 0))
IMAP1(sign_u32, u32, u32, x != 0u)
IMAP2(floor_divide_i32, s32, s32, floordiv_i32(a, b))
IMAP2(remainder_i32, s32, s32, rem_i32(a, b))
IMAP2(floor_divide_u32, u32, u32, b ? a / b : 0u)
/* integer pow: squaring and multiplying, wrapping; a negative exponent: 1 / a^-b toward zero */
INLINE u32 pow_u32(u32 a, u32 b) {
    u32 r = 1u;
    for (; b; b >>= 1, a *= a)
        if (b & 1u) r *= a;
    return r;
}
INLINE s32 pow_i32(s32 a, s32 b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    return (s32)pow_u32((u32)a, (u32)b);
}
IMAP2(pow_i32, s32, s32, pow_i32(a, b))
IMAP2(pow_u32, u32, u32, pow_u32(a, b))
IMAP2(remainder_u32, u32, u32, b ? a % b : 0u)

IMAP2(eq_bool, u32, u32, a == b)
IMAP2(ne_bool, u32, u32, a != b)
WHERE(where_bool, u32)
IMAP1(copy_bool, u32, u32, x)
IMAP2(logical_and_bool, u32, u32, a & b)
IMAP2(logical_or_bool, u32, u32, a | b)
IMAP2(logical_xor_bool, u32, u32, a ^ b)
IMAP1(logical_not_bool, u32, u32, x ^ 1u)
IMAP2(bitwise_and_bool, u32, u32, a & b)
IMAP2(bitwise_or_bool, u32, u32, a | b)
IMAP2(bitwise_xor_bool, u32, u32, a ^ b)
IMAP1(bitwise_invert_bool, u32, u32, x ^ 1u)

/* float classes, on the bits */
INLINE u32 bits_of(float x) { return __builtin_bit_cast(u32, x); }
IMAP1(isnan, float, u32, (bits_of(x) & 0x7fffffffu) > 0x7f800000u)
IMAP1(isinf, float, u32, (bits_of(x) & 0x7fffffffu) == 0x7f800000u)
IMAP1(isfinite, float, u32, (bits_of(x) & 0x7fffffffu) < 0x7f800000u)
IMAP1(signbit, float, u32, bits_of(x) >> 31)

/* astype: float to integer toward zero, saturating, NaN to 0 (clamped first: C leaves out-of-range
   conversions undefined, and wasm's own trap); to bool on the bits (nonzero; NaN too) */
INLINE s32 f32_to_i32(float x) {
    if (x >= 2147483648.0f) return 2147483647;
    if (!(x > -2147483648.0f)) return x != x ? 0 : (s32)0x80000000u;
    return (s32)x;
}
INLINE u32 f32_to_u32(float x) {
    if (x >= 4294967296.0f) return 0xffffffffu;
    return x > 0.0f ? (u32)x : 0u;
}
IMAP1(astype_f32_i32, float, s32, f32_to_i32(x))
IMAP1(astype_f32_u32, float, u32, f32_to_u32(x))
IMAP1(astype_f32_bool, float, u32, (bits_of(x) & 0x7fffffffu) != 0u)
IMAP1(astype_i32_f32, s32, float, (float)x)
IMAP1(astype_i32_u32, s32, u32, (u32)x)
IMAP1(astype_i32_bool, s32, u32, x != 0)
IMAP1(astype_u32_f32, u32, float, (float)x)
IMAP1(astype_u32_i32, u32, s32, (s32)x)
IMAP1(astype_u32_bool, u32, u32, x != 0u)
IMAP1(astype_bool_f32, u32, float, (float)x)
IMAP1(astype_bool_i32, u32, s32, (s32)x)
IMAP1(astype_bool_u32, u32, u32, x)
IMAP1(astype_f32_f32, float, float, x)
IMAP1(astype_i32_i32, s32, s32, x)
IMAP1(astype_u32_u32, u32, u32, x)
IMAP1(astype_bool_bool, u32, u32, x)

/* float16 storage: two bytes an element, computed as float (trueno_web/dtypes.py); both conversions on the
   bits, as shaders/functions_half.wgsl: to float16 rounds to nearest even, past 65520 to Inf, a NaN keeps
   its sign and top payload bits */
INLINE u32 f32_to_f16(float x) {
    u32 b = bits_of(x), sign = (b >> 16) & 0x8000u, a = b & 0x7fffffffu;
    if (a > 0x7f800000u) {
        u32 nan = 0x7c00u | ((a & 0x7fffffu) >> 13);
        return sign | (nan == 0x7c00u ? 0x7c01u : nan);
    }
    if (a >= 0x477ff000u) return sign | 0x7c00u;
    if (a >= 0x38800000u) {
        u32 m = a - 0x38000000u;
        return sign | ((m + 0xfffu + ((m >> 13) & 1u)) >> 13);
    }
    if (a <= 0x33000000u) return sign;
    u32 mant = (a & 0x7fffffu) | 0x800000u, shift = 126u - (a >> 23);
    return sign | ((mant + (1u << (shift - 1u)) - 1u + ((mant >> shift) & 1u)) >> shift);
}
INLINE float f16_to_f32(u32 h) {
    u32 sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1fu) return __builtin_bit_cast(float, sign | 0x7f800000u | (m << 13));
    if (e == 0u) return __builtin_bit_cast(float, sign | bits_of((float)m * 5.9604644775390625e-8f));
    return __builtin_bit_cast(float, sign | ((e + 112u) << 23) | (m << 13));
}
IMAP1(astype_f16_f32, u16, float, f16_to_f32(x))
IMAP1(astype_f16_i32, u16, s32, f32_to_i32(f16_to_f32(x)))
IMAP1(astype_f16_u32, u16, u32, f32_to_u32(f16_to_f32(x)))
IMAP1(astype_f16_bool, u16, u32, (x & 0x7fffu) != 0u)
IMAP1(astype_f16_f16, u16, u16, x)
IMAP1(copy_f16, u16, u16, x)
IMAP1(astype_f32_f16, float, u16, f32_to_f16(x))
IMAP1(astype_i32_f16, s32, u16, f32_to_f16((float)x))
IMAP1(astype_u32_f16, u32, u16, f32_to_f16((float)x))
IMAP1(astype_bool_f16, u32, u16, x ? 0x3c00u : 0u)

/* ------------------------------------------------------------------ counter-based random numbers (tw.random) */

/* Threefry-2x32, 20 rounds, on 4 counters at once (trueno_web/prng.py, shaders/functions.wgsl: tw_threefry). */
static const u32 TF_ROT[8] = {13, 15, 26, 6, 17, 29, 16, 24};

INLINE void threefry4(u32 k0, u32 k1, u4 c0, u4 c1, u4 *y0, u4 *y1) {
    u32 ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
    u4 x0 = c0 + k0, x1 = c1 + k1;
#pragma clang loop unroll(disable) /* 5 blocks of 4 rounds, rolled: the module stays small */
    for (u32 b = 0; b < 5; b++) {
        for (int j = 0; j < 4; j++) {
            u32 r = TF_ROT[(b & 1) * 4 + j];
            x0 += x1;
            x1 = ((x1 << r) | (x1 >> (32 - r))) ^ x0;
        }
        x0 += ks[(b + 1) % 3];
        x1 += ks[(b + 2) % 3] + b + 1;
    }
    *y0 = x0;
    *y1 = x1;
}

/* the two words of elements n .. n + 3 of a draw: key and counter offset from their 16-bit halves; the counter
 * of element i is the 64-bit offset + i as (hi, lo) */
typedef struct { u32 k0, k1, off; } draw_key;
INLINE draw_key key_of(float k0h, float k0l, float k1h, float k1l, float oh, float ol) {
    draw_key k = {((u32)k0h << 16) | (u32)k0l, ((u32)k1h << 16) | (u32)k1l, ((u32)oh << 16) | (u32)ol};
    return k;
}
INLINE void draw_bits(draw_key k, u32 n, u4 *y0, u4 *y1) {
    u4 lo = (u4){n, n + 1u, n + 2u, n + 3u} + k.off;
    u4 hi = (u4)(lo < k.off) & 1u;
    threefry4(k.k0, k.k1, hi, lo, y0, y1);
}
INLINE f4 unit4(u4 bits) { return (f4)((bits >> 9) | 0x3f800000u) - 1.0f; } /* [0, 1), exact */

/* one loop for every distribution (the module stays small): f maps the two words of 4 elements to values */
typedef f4 (*draw_fn)(u4 b0, u4 b1, float a, float b);
static __attribute__((noinline)) void draw(draw_fn f, float *yp, int n, int start, draw_key key, float a, float b) {
    for (int i = 0; i < n; i += 4) {
        u4 b0, b1;
        draw_bits(key, (u32)(start + i), &b0, &b1);
        f4 v = f(b0, b1, a, b);
        if (i + 4 <= n) st(yp + i, v);
        else st_tail(yp + i, v, n - i);
    }
}

static f4 uniform4(u4 b0, u4 b1, float lo, float hi) {
    f4 u = unit4(b0 ^ b1) * (hi - lo) + lo;
    return sel(u > lo, u, splat(lo)); /* max(lo, u) */
}
/* Box-Muller: radius from the first word (1 - u in (0, 1]), angle from the second; own log and cos */
static f4 normal4(u4 b0, u4 b1, float a, float b) {
    f4 r = vsqrt(-2.0f * v_log(1.0f - unit4(b0)));
    return r * v_sincos(6.2831854820251465f * unit4(b1), 1);
}
static f4 bernoulli4(u4 b0, u4 b1, float p, float unused) { return v1or0(unit4(b0 ^ b1) < p); }

#define KEY_ARGS float k0h, float k0l, float k1h, float k1l, float oh, float ol
#define KEY key_of(k0h, k0l, k1h, k1l, oh, ol)
EXPORT void tw_random_uniform(float *yp, int n, int start, KEY_ARGS, float lo, float hi) {
    draw(uniform4, yp, n, start, KEY, lo, hi);
}
EXPORT void tw_random_normal(float *yp, int n, int start, KEY_ARGS) { draw(normal4, yp, n, start, KEY, 0.0f, 0.0f); }
EXPORT void tw_random_bernoulli(float *yp, int n, int start, KEY_ARGS, float p) {
    draw(bernoulli4, yp, n, start, KEY, p, 0.0f);
}
/* the `index` generator (the creation functions' iota): element start + i of a shape's row-major order is
 * sum(k_d * stride_d) of its position k; dims holds (size, stride) per dimension, the last first */
EXPORT __attribute__((minsize)) void tw_index_i32(s32 *yp, int n, int start, const s32 *dims, int ndims) {
    for (int i = 0; i < n; i++) {
        u32 rest = (u32)(start + i), at = 0;
        for (int d = 0; d < ndims; d++) {
            at += (rest % (u32)dims[2 * d]) * (u32)dims[2 * d + 1];
            rest /= (u32)dims[2 * d];
        }
        yp[i] = (s32)at;
    }
}

/* ------------------------------------------------------------------ reductions */

/* Sums accumulate in float64 (products of two floats are exact there), pairwise over blocks of RBLOCK
 * elements, and round to float32 once: the error is that one rounding plus n 2^-53 sum|x| at most.
 * Squares (norm_l2) are float32, so x^2 overflows to inf for |x| > 1.8e19 as on the other backends. */
#define RBLOCK 2048

typedef double d2 __attribute__((vector_size(16)));
INLINE d2 lo2(f4 v) { return __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1), d2); }
INLINE d2 hi2(f4 v) { return __builtin_convertvector(__builtin_shufflevector(v, v, 2, 3), d2); }

typedef double (*block_fn)(const float *a, const float *b, int n);

#define BLOCK_SUM(NAME, TERM, STERM)                                                \
    static double NAME(const float *a, const float *b, int n) {                     \
        (void)b;                                                                    \
        d2 s0 = {0.0, 0.0}, s1 = s0, s2 = s0, s3 = s0;                              \
        int i = 0;                                                                  \
        for (; i + 8 <= n; i += 8) {                                                \
            s0 += TERM(lo2, i);                                                     \
            s1 += TERM(hi2, i);                                                     \
            s2 += TERM(lo2, i + 4);                                                 \
            s3 += TERM(hi2, i + 4);                                                 \
        }                                                                           \
        for (; i + 4 <= n; i += 4) {                                                \
            s0 += TERM(lo2, i);                                                     \
            s1 += TERM(hi2, i);                                                     \
        }                                                                           \
        double t = 0.0;                                                             \
        for (; i < n; i++) t += STERM(i);                                           \
        d2 s = (s0 + s1) + (s2 + s3);                                               \
        return (s[0] + s[1]) + t;                                                   \
    }

#define T_SUM(h, i) h(ld(a + (i)))
#define S_SUM(i) (double)a[i]
#define T_DOT(h, i) (h(ld(a + (i))) * h(ld(b + (i))))
#define S_DOT(i) ((double)a[i] * (double)b[i])
#define T_L1(h, i) h(vabs(ld(a + (i))))
#define S_L1(i) (double)__builtin_fabsf(a[i])
#define T_SQ(h, i) h(ld(a + (i)) * ld(a + (i)))
#define S_SQ(i) (double)(a[i] * a[i])

BLOCK_SUM(block_sum, T_SUM, S_SUM)
BLOCK_SUM(block_dot, T_DOT, S_DOT)
BLOCK_SUM(block_l1, T_L1, S_L1)
BLOCK_SUM(block_sq, T_SQ, S_SQ)

static double pairwise(block_fn f, const float *a, const float *b, int n) {
    if (n <= RBLOCK) return f(a, b, n);
    int h = ((n / 2) + RBLOCK - 1) / RBLOCK * RBLOCK; /* 0 < h < n */
    return pairwise(f, a, b, h) + pairwise(f, a + h, b ? b + h : b, n - h);
}

static float sum_row(const float *x, const float *b, int n) { return (float)pairwise(block_sum, x, 0, n); }
static float dot_row(const float *a, const float *b, int n) { return (float)pairwise(block_dot, a, b, n); }
static float norm_l1_row(const float *x, const float *b, int n) { return (float)pairwise(block_l1, x, 0, n); }
static float norm_l2_row(const float *x, const float *b, int n) {
    return (float)__builtin_sqrt(pairwise(block_sq, x, 0, n));
}

#define EXTREME(NAME, FN, IDENT)                                                    \
    static float NAME##_row(const float *x, const float *b, int n) {                \
        f4 m0 = splat(IDENT), m1 = m0, m2 = m0, m3 = m0;                            \
        int i = 0;                                                                  \
        for (; i + 16 <= n; i += 16) {                                              \
            m0 = FN(m0, ld(x + i));                                                 \
            m1 = FN(m1, ld(x + i + 4));                                             \
            m2 = FN(m2, ld(x + i + 8));                                             \
            m3 = FN(m3, ld(x + i + 12));                                            \
        }                                                                           \
        for (; i + 4 <= n; i += 4) m0 = FN(m0, ld(x + i));                          \
        if (i < n) m0 = FN(m0, ld_tail(x + i, n - i, IDENT));                       \
        f4 m = FN(FN(m0, m1), FN(m2, m3));                                          \
        m = FN(m, __builtin_shufflevector(m, m, 2, 3, 0, 1));                       \
        m = FN(m, __builtin_shufflevector(m, m, 1, 0, 3, 2));                       \
        return m[0];                                                                \
    }

EXTREME(max, vmax, -F32_INF)
EXTREME(min, vmin, F32_INF)

/* the product, 16 lanes in turn (each multiplication rounds once, in any order: relative error <= (n-1) 2^-24
 * while no partial product leaves float32's normal range) */
static float prod_row(const float *x, const float *b, int n) {
    f4 p0 = splat(1.0f), p1 = p0, p2 = p0, p3 = p0;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        p0 *= ld(x + i);
        p1 *= ld(x + i + 4);
        p2 *= ld(x + i + 8);
        p3 *= ld(x + i + 12);
    }
    for (; i + 4 <= n; i += 4) p0 *= ld(x + i);
    if (i < n) p0 *= ld_tail(x + i, n - i, 1.0f);
    f4 p = (p0 * p1) * (p2 * p3);
    return (p[0] * p[1]) * (p[2] * p[3]);
}

/* The exports: y[r] = the reduction of row r, for `rows` consecutive rows of `cols` floats (one call for all of
 * them; a full reduction is one row). dot reads a and b; the others one input. */
typedef float (*row_fn)(const float *a, const float *b, int n);
static __attribute__((noinline)) void over_rows(row_fn f, const float *a, const float *b, float *y, int rows, int cols) {
    for (long r = 0; r < rows; r++) y[r] = f(a + r * cols, b ? b + r * cols : b, cols);
}
#define ROWS(NAME)                                                                  \
    EXPORT void tw_##NAME(const float *x, float *y, int rows, int cols) { over_rows(NAME##_row, x, 0, y, rows, cols); }
ROWS(sum)
ROWS(norm_l1)
ROWS(norm_l2)
ROWS(max)
ROWS(min)
ROWS(prod)
EXPORT void tw_dot(const float *a, const float *b, float *y, int rows, int cols) {
    over_rows(dot_row, a, b, y, rows, cols);
}

/* ------------------------------------------------------------------ integer reductions and scans
   Reductions of int32, uint32 and bool rows (y[r] of `rows` rows of `cols` words, as the float ones above):
   sums and products wrap (through u32: the same bits for int32 and uint32), max and min are exact (bool: or,
   and). Scans (cumulative_sum, cumulative_prod): y = the running fold of each row, in order. */
#define IREDUCE(NAME, T, INIT, STEP)                                                \
    EXPORT void tw_##NAME(const T *x, T *y, int rows, int cols) {                   \
        for (long r = 0; r < rows; r++) {                                           \
            const T *xr = x + r * cols;                                             \
            T acc = INIT;                                                           \
            for (int i = 0; i < cols; i++) {                                        \
                T v = xr[i];                                                        \
                acc = (T)(STEP);                                                    \
            }                                                                       \
            y[r] = acc;                                                             \
        }                                                                           \
    }
IREDUCE(sum_i32, u32, 0u, acc + v)
IREDUCE(sum_u32, u32, 0u, acc + v)
IREDUCE(prod_i32, u32, 1u, acc * v)
IREDUCE(prod_u32, u32, 1u, acc * v)
IREDUCE(max_i32, s32, (s32)0x80000000u, v > acc ? v : acc)
IREDUCE(min_i32, s32, 0x7fffffff, v < acc ? v : acc)
IREDUCE(max_u32, u32, 0u, v > acc ? v : acc)
IREDUCE(min_u32, u32, 0xffffffffu, v < acc ? v : acc)
IREDUCE(max_bool, u32, 0u, acc | v)
IREDUCE(min_bool, u32, 1u, acc & v)

#define SCAN(NAME, T, INIT, STEP)                                                   \
    EXPORT void tw_##NAME(const T *x, T *y, int rows, int cols) {                   \
        for (long r = 0; r < rows; r++) {                                           \
            const T *xr = x + r * cols;                                             \
            T *yr = y + r * cols, acc = INIT;                                       \
            for (int i = 0; i < cols; i++) {                                        \
                T v = xr[i];                                                        \
                yr[i] = acc = (T)(STEP);                                            \
            }                                                                       \
        }                                                                           \
    }
SCAN(cumulative_sum, float, 0.0f, acc + v)
SCAN(cumulative_sum_i32, u32, 0u, acc + v)
SCAN(cumulative_sum_u32, u32, 0u, acc + v)
SCAN(cumulative_prod, float, 1.0f, acc * v)
SCAN(cumulative_prod_i32, u32, 1u, acc * v)
SCAN(cumulative_prod_u32, u32, 1u, acc * v)

/* ------------------------------------------------------------------ softmax */

/* Row by row along the last axis: NaN-propagating max, y = exp(x - max), s = sum of y (float64, rounded once),
 * then y / s (or x - max - log s). */
EXPORT void tw_softmax(const float *x, float *y, int rows, int cols, int log) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (long)r * cols;
        float *yr = y + (long)r * cols;
        f4 m = splat(max_row(xr, 0, cols));
        int j = 0;
        for (; j + 4 <= cols; j += 4) st(yr + j, v_exp(ld(xr + j) - m));
        if (j < cols) st_tail(yr + j, v_exp(ld_tail(xr + j, cols - j, 0.0f) - m), cols - j);
        f4 s = splat((float)pairwise(block_sum, yr, 0, cols));
        if (log) {
            f4 ls = v_log(s);
            for (j = 0; j + 4 <= cols; j += 4) st(yr + j, (ld(xr + j) - m) - ls);
            if (j < cols) st_tail(yr + j, (ld_tail(xr + j, cols - j, 0.0f) - m) - ls, cols - j);
        } else {
            for (j = 0; j + 4 <= cols; j += 4) st(yr + j, ld(yr + j) / s);
            if (j < cols) st_tail(yr + j, ld_tail(yr + j, cols - j, 0.0f) / s, cols - j);
        }
    }
}

/* ------------------------------------------------------------------ matmul */

/* C(m,n) = A(m,k) @ B(k,n), row-major. B is packed per (KC x NC) panel into 8-column strips (zero padded
 * past n); a 4x8 register tile of C (8 vector accumulators) walks a strip with splats of A. Any m, k, n. */
#define MR 4
#define NR 8
#define KC 256
#define NC 256

static float packed_b[KC * NC] __attribute__((aligned(16)));

static void pack_b(const float *b, int n, int pc, int kc, int jc, int nc) {
    int strips = (nc + NR - 1) / NR;
    for (int s = 0; s < strips; s++) {
        int j0 = jc + s * NR;
        int w = n - j0 < NR ? n - j0 : NR;
        float *dst = packed_b + s * kc * NR;
        for (int p = 0; p < kc; p++) {
            const float *src = b + (long)(pc + p) * n + j0;
            if (w == NR) {
                st(dst, ld(src));
                st(dst + 4, ld(src + 4));
            } else {
                for (int t = 0; t < NR; t++) dst[t] = t < w ? src[t] : 0.0f;
            }
            dst += NR;
        }
    }
}

static void micro_4x8(const float *a, int lda, int rows, const float *bp, int kc, float *c, int ldc, int cols,
                      int accumulate) {
    const float *a0 = a;
    const float *a1 = rows > 1 ? a + lda : a0;
    const float *a2 = rows > 2 ? a + 2 * lda : a0;
    const float *a3 = rows > 3 ? a + 3 * lda : a0;
    f4 c00 = splat(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
    for (int p = 0; p < kc; p++) {
        f4 b0 = ld(bp), b1 = ld(bp + 4);
        bp += NR;
        f4 x = splat(a0[p]);
        c00 += x * b0;
        c01 += x * b1;
        x = splat(a1[p]);
        c10 += x * b0;
        c11 += x * b1;
        x = splat(a2[p]);
        c20 += x * b0;
        c21 += x * b1;
        x = splat(a3[p]);
        c30 += x * b0;
        c31 += x * b1;
    }
    f4 acc[MR][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}};
    for (int r = 0; r < rows; r++) {
        float *cr = c + (long)r * ldc;
        if (cols == NR) {
            if (accumulate) {
                st(cr, ld(cr) + acc[r][0]);
                st(cr + 4, ld(cr + 4) + acc[r][1]);
            } else {
                st(cr, acc[r][0]);
                st(cr + 4, acc[r][1]);
            }
        } else {
            float t[NR];
            st(t, acc[r][0]);
            st(t + 4, acc[r][1]);
            for (int j = 0; j < cols; j++) cr[j] = accumulate ? cr[j] + t[j] : t[j];
        }
    }
}

EXPORT void tw_matmul(const float *a, const float *b, float *c, int m, int k, int n) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        for (long i = 0; i < (long)m * n; i++) c[i] = 0.0f;
        return;
    }
    for (int jc = 0; jc < n; jc += NC) {
        int nc = n - jc < NC ? n - jc : NC;
        for (int pc = 0; pc < k; pc += KC) {
            int kc = k - pc < KC ? k - pc : KC;
            pack_b(b, n, pc, kc, jc, nc);
            for (int i0 = 0; i0 < m; i0 += MR) {
                int rows = m - i0 < MR ? m - i0 : MR;
                const float *ap = a + (long)i0 * k + pc;
                for (int j0 = 0; j0 < nc; j0 += NR) {
                    int cols = nc - j0 < NR ? nc - j0 : NR;
                    micro_4x8(ap, k, rows, packed_b + (j0 / NR) * kc * NR, kc, c + (long)i0 * n + jc + j0, n, cols,
                              pc > 0);
                }
            }
        }
    }
}

/* Integer products, exact (wrapping: int32 and uint32 share the bits), row by row: C's row i accumulates
 * a[i][p] * B's row p */
static void matmul_words(const u32 *a, const u32 *b, u32 *c, int m, int k, int n) {
    for (long i = 0; i < m; i++) {
        u32 *cr = c + i * n;
        for (int j = 0; j < n; j++) cr[j] = 0u;
        for (int p = 0; p < k; p++) {
            u32 x = a[i * k + p];
            const u32 *br = b + (long)p * n;
            for (int j = 0; j < n; j++) cr[j] += x * br[j];
        }
    }
}
EXPORT void tw_matmul_i32(const u32 *a, const u32 *b, u32 *c, int m, int k, int n) { matmul_words(a, b, c, m, k, n); }
EXPORT void tw_matmul_u32(const u32 *a, const u32 *b, u32 *c, int m, int k, int n) { matmul_words(a, b, c, m, k, n); }

/* A batch of products C[p] = A[p] @ B[p], C's consecutive (m * n apart): product p's index over the `ndims`
 * batch dimensions (dims: size, A stride, B stride per dimension, in elements, outermost first; a stride of
 * 0 is a broadcast operand) gives the offsets of its A and B. One call for the whole batch. */
#define MATMUL_BATCH(NAME, T, ONE)                                                                          \
    EXPORT void NAME(const T *a, const T *b, T *c, int m, int k, int n, int count, const int *dims, int ndims) { \
        for (long p = 0; p < count; p++) {                                                                  \
            long rest = p, oa = 0, ob = 0;                                                                  \
            for (int d = ndims - 1; d >= 0; d--) {                                                          \
                long size = dims[3 * d], i = rest % size;                                                   \
                rest /= size;                                                                               \
                oa += i * dims[3 * d + 1];                                                                  \
                ob += i * dims[3 * d + 2];                                                                  \
            }                                                                                               \
            ONE(a + oa, b + ob, c + p * m * n, m, k, n);                                                    \
        }                                                                                                   \
    }
MATMUL_BATCH(tw_matmul_batch, float, tw_matmul)
MATMUL_BATCH(tw_matmul_batch_i32, u32, matmul_words)
MATMUL_BATCH(tw_matmul_batch_u32, u32, matmul_words)

/* ------------------------------------------------------------------ attention */

INLINE float nanmax1(float a, float b) { return a != a ? a : (b != b ? b : (a > b ? a : b)); }

/* sum of a[d] b[d], d < e, in SIMD lanes (the tail zero-padded) */
static float dot_e(const float *a, const float *b, int e) {
    f4 acc = splat(0.0f);
    int d = 0;
    for (; d + 4 <= e; d += 4) acc += ld(a + d) * ld(b + d);
    if (d < e) acc += ld_tail(a + d, e - d, 0.0f) * ld_tail(b + d, e - d, 0.0f);
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* One query row: y (ev floats) = the softmax of its scores over keys 0..n-1 (masked where mrow[j ms] == 0;
 * mrow 0: no mask) @ v, online over blocks of 4 keys: the block's scores, the running max m (NaN-propagating),
 * the sum l and y rescaled by exp(m_old - m) (1 where m stays), then l += p, y += p v with p = exp(s - m)
 * (0 for a score of -inf: masked, or -inf itself). A row whose max stays -inf (all masked) is NaN. */
static void attention_row(const float *qr, const float *k, const float *v, const float *mrow, int ms, float *y,
                          int n, int e, int ev, float scale) {
    float m = -F32_INF, l = 0.0f;
    for (int c = 0; c < ev; c++) y[c] = 0.0f;
    for (int j0 = 0; j0 < n; j0 += 4) {
        int cnt = n - j0 < 4 ? n - j0 : 4;
        f4 s = splat(-F32_INF);
        for (int t = 0; t < cnt; t++) {
            long j = j0 + t;
            if (!mrow || mrow[j * ms] != 0.0f) s[t] = dot_e(qr, k + j * e, e) * scale;
        }
        float mn = m;
        for (int t = 0; t < cnt; t++) mn = nanmax1(mn, s[t]);
        f4 a4 = mn == m ? splat(1.0f) : v_exp(splat(m - mn));
        f4 p = sel(s == splat(-F32_INF), splat(0.0f), v_exp(s - splat(mn)));
        l = l * a4[0] + ((p[0] + p[1]) + (p[2] + p[3]));
        const float *vr = v + (long)j0 * ev;
        int c = 0;
        for (; c + 4 <= ev; c += 4) {
            f4 acc = ld(y + c) * a4;
            for (int t = 0; t < cnt; t++) acc += splat(p[t]) * ld(vr + (long)t * ev + c);
            st(y + c, acc);
        }
        for (; c < ev; c++) {
            float acc = y[c] * a4[0];
            for (int t = 0; t < cnt; t++) acc += p[t] * vr[(long)t * ev + c];
            y[c] = acc;
        }
        m = mn;
    }
    for (int c = 0; c < ev; c++) y[c] = m == -F32_INF ? __builtin_nanf("") : y[c] / l;
}

/* Fused attention of a batch (attention_kind.py): y[b] = softmax(q[b] k[b]^T scale, masked) v[b] for each
 * batch element b, whose index over the `ndims` batch dimensions (dims: size, then the q, k, v and mask
 * strides per dimension, in elements, outermost first; 0: broadcast) gives the operands' offsets. The mask
 * (0: none) is read at i ml + j ms of its batch element; causal: query i reads keys j <= i only. */
EXPORT void tw_attention(const float *q, const float *k, const float *v, const float *mask, float *y, int nq, int nk,
                         int e, int ev, int count, const int *dims, int ndims, float scale, int causal, int ml,
                         int ms) {
    for (long b = 0; b < count; b++) {
        long rest = b, o[4] = {0, 0, 0, 0};
        for (int d = ndims - 1; d >= 0; d--) {
            const int *dim = dims + 5 * d;
            long size = dim[0], i = rest % size;
            rest /= size;
            for (int t = 0; t < 4; t++) o[t] += i * dim[1 + t];
        }
        for (long i = 0; i < nq; i++) {
            int n = causal && i + 1 < nk ? (int)i + 1 : nk;
            const float *mrow = mask ? mask + o[3] + i * ml : 0;
            attention_row(q + o[0] + i * e, k + o[1], v + o[2], mrow, ms, y + (b * nq + i) * ev, n, e, ev, scale);
        }
    }
}

/* ------------------------------------------------------------------ strided views */

/* y = a strided view of x, row-major: dims holds (size, stride, lo, hi) per dimension in elements, outermost
 * first (ndims >= 1); element (i0, i1, ...) reads x[offset + i0 stride0 + i1 stride1 + ...] where every
 * lo <= i < hi, else is 0.0 (padding; such addresses are never read). One call per view. */
#define GATHER(NAME, T)                                                                                   \
    EXPORT __attribute__((minsize)) void NAME(const T *x, int offset, T *y, const int *dims, int ndims) {       \
        const int *last = dims + 4 * (ndims - 1);                                                          \
        int n = last[0], step = last[1];                                                                   \
        long rows = 1;                                                                                     \
        for (int d = 0; d < ndims - 1; d++) rows *= dims[4 * d];                                           \
        for (long r = 0; r < rows; r++, y += n) {                                                          \
            long rest = r, at = offset;                                                                    \
            int valid = 1;                                                                                 \
            for (int d = ndims - 2; d >= 0; d--) {                                                         \
                const int *w = dims + 4 * d;                                                               \
                long i = rest % w[0];                                                                      \
                rest /= w[0];                                                                              \
                at += i * w[1];                                                                            \
                valid &= i >= w[2] && i < w[3];                                                            \
            }                                                                                              \
            int lo = valid ? last[2] : n, hi = valid ? last[3] : n;                                        \
            const T *xr = x + at;                                                                          \
            __builtin_memset(y, 0, sizeof(T) * (unsigned long)lo);                                         \
            __builtin_memset(y + hi, 0, sizeof(T) * (unsigned long)(n - hi));                              \
            if (step == 1) {                                                                               \
                __builtin_memcpy(y + lo, xr + lo, sizeof(T) * (unsigned long)(hi - lo));                   \
            } else {                                                                                       \
                for (long j = lo; j < hi; j++) y[j] = xr[j * step];                                        \
            }                                                                                              \
        }                                                                                                  \
    }
GATHER(tw_gather, float)
GATHER(tw_gather16, u16) /* float16's two-byte elements */

/* ------------------------------------------------------------------ take, scatter_add */

/* The element of x that output element i of a take (or element i of scatter_add's values) stands for:
 * (i / outer) n inner + j inner + i % inner, index j wrapped once if negative and clamped into [0, n). */
INLINE long take_at(long i, long long j, int outer, int n, int inner) { /* j: 64 bits, a uint32 index too */
    j = j < 0 ? j + n : j;
    j = j < 0 ? 0 : (j >= n ? n - 1 : j);
    return (i / outer) * (long)n * inner + (long)j * inner + i % inner;
}

/* y[k] = x[take_at(start + k, idx[k])], k < count: 32-bit words of any dtype (a chunk of a fused chain
 * starting at output element `start`; x whole). */
EXPORT void tw_take_i32(const unsigned *x, const int *idx, unsigned *y, int count, int start, int outer, int n,
                        int inner) {
    for (int k = 0; k < count; k++) y[k] = x[take_at((long)start + k, idx[k], outer, n, inner)];
}

EXPORT void tw_take_u32(const unsigned *x, const unsigned *idx, unsigned *y, int count, int start, int outer,
                        int n, int inner) {
    for (int k = 0; k < count; k++) y[k] = x[take_at((long)start + k, (long long)idx[k], outer, n, inner)];
}

/* out = x with v[k] added at take_at(k, idx[k]) for each of the count values (x copied first). */
#define SCATTER_ADD(NAME, T)                                                                                  \
    EXPORT void NAME(const T *x, const int *idx, const T *v, T *out, int size, int count, int outer, int n,   \
                     int inner, int unsigned_idx) {                                                            \
        __builtin_memcpy(out, x, 4 * (unsigned long)size);                                                    \
        for (int k = 0; k < count; k++) {                                                                     \
            long long j = unsigned_idx ? (long long)(unsigned)idx[k] : idx[k];                                \
            long at = take_at(k, j, outer, n, inner);                                                         \
            out[at] = (T)(out[at] + v[k]);                                                                    \
        }                                                                                                     \
    }
SCATTER_ADD(tw_scatter_add, float)
SCATTER_ADD(tw_scatter_add_i32, unsigned) /* int32 wraps: added as 32-bit words */
SCATTER_ADD(tw_scatter_add_u32, unsigned)

/* ------------------------------------------------------------------ convolve2d */

/* "valid", no kernel flip: out[r][c] = sum_{p,q} img[r+p][c+q] ker[p][q]. 16 output columns per pass keep
 * 4 accumulators in registers; then 4 at a time; then one at a time. */
EXPORT void tw_convolve2d(const float *img, int h, int w, const float *ker, int kh, int kw, float *out) {
    int oh = h - kh + 1, ow = w - kw + 1;
    if (oh <= 0 || ow <= 0) return;
    for (int r = 0; r < oh; r++) {
        float *o = out + (long)r * ow;
        int c = 0;
        for (; c + 16 <= ow; c += 16) {
            f4 s0 = splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
            for (int p = 0; p < kh; p++) {
                const float *row = img + (long)(r + p) * w + c;
                const float *kr = ker + p * kw;
                for (int q = 0; q < kw; q++) {
                    f4 kv = splat(kr[q]);
                    s0 += ld(row + q) * kv;
                    s1 += ld(row + q + 4) * kv;
                    s2 += ld(row + q + 8) * kv;
                    s3 += ld(row + q + 12) * kv;
                }
            }
            st(o + c, s0);
            st(o + c + 4, s1);
            st(o + c + 8, s2);
            st(o + c + 12, s3);
        }
        for (; c + 4 <= ow; c += 4) {
            f4 s0 = splat(0.0f);
            for (int p = 0; p < kh; p++) {
                const float *row = img + (long)(r + p) * w + c;
                const float *kr = ker + p * kw;
                for (int q = 0; q < kw; q++) s0 += ld(row + q) * splat(kr[q]);
            }
            st(o + c, s0);
        }
        for (; c < ow; c++) {
            float s = 0.0f;
            for (int p = 0; p < kh; p++) {
                const float *row = img + (long)(r + p) * w + c;
                const float *kr = ker + p * kw;
                for (int q = 0; q < kw; q++) s += row[q] * kr[q];
            }
            o[c] = s;
        }
    }
}

/* ------------------------------------------------------------------ sort, argsort, searchsorted */

/* A stored word's sort key (trueno_web/sort_kinds.py, shaders/sort_key.wgsl): kind 0 (bool, uint32) as it is,
 * 1 (int32) its sign bit flipped, 2 (float32) -0.0 as 0.0, negatives complemented, every NaN the largest. */
INLINE u32 sort_key(u32 bits, int kind) {
    if (kind == 1) return bits ^ 0x80000000u;
    if (kind != 2) return bits;
    u32 mag = bits & 0x7fffffffu;
    if (mag > 0x7f800000u) return 0xffffffffu;
    if (mag == 0) return 0x80000000u;
    return (bits >> 31) ? ~bits : bits | 0x80000000u;
}

/* rows x cols words of x sorted along rows: a bottom-up merge sort of (key, index) by key, stable (ties in
 * input order); descending sorts the complemented keys. y gets the values, or the indices where `indices`.
 * scratch: 4 * cols words. */
EXPORT __attribute__((minsize)) void tw_sort(const u32 *x, u32 *y, int rows, int cols, int kind, int descending, int indices, u32 *scratch) {
    for (int r = 0; r < rows; r++) {
        const u32 *row = x + (u64)r * (u64)cols;
        u32 *key = scratch, *idx = scratch + cols, *key2 = idx + cols, *idx2 = key2 + cols;
        for (int c = 0; c < cols; c++) {
            u32 k = sort_key(row[c], kind);
            key[c] = descending ? ~k : k;
            idx[c] = (u32)c;
        }
        for (int w = 1; w < cols; w *= 2) {
            for (int lo = 0; lo < cols; lo += 2 * w) {
                int mid = lo + w < cols ? lo + w : cols, hi = lo + 2 * w < cols ? lo + 2 * w : cols;
                int a = lo, b = mid, o = lo;
                while (a < mid && b < hi) {
                    int take_b = key[b] < key[a];
                    int from = take_b ? b++ : a++;
                    key2[o] = key[from];
                    idx2[o++] = idx[from];
                }
                for (; a < mid; a++, o++) key2[o] = key[a], idx2[o] = idx[a];
                for (; b < hi; b++, o++) key2[o] = key[b], idx2[o] = idx[b];
            }
            u32 *t = key;
            key = key2, key2 = t;
            t = idx, idx = idx2, idx2 = t;
        }
        u32 *out = y + (u64)r * (u64)cols;
        for (int c = 0; c < cols; c++) out[c] = indices ? idx[c] : row[idx[c]];
    }
}

/* y[i]: where x2[i] goes in the sorted x1 of n words, by binary search on the keys: the first j with
 * x1[j] >= x2[i], or with x1[j] > x2[i] where `right` */
EXPORT __attribute__((minsize)) void tw_searchsorted(const u32 *x1, int n, const u32 *x2, int m, u32 *y, int kind, int right) {
    for (int i = 0; i < m; i++) {
        u32 v = sort_key(x2[i], kind);
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = (int)(((unsigned)lo + (unsigned)hi) >> 1);
            u32 k = sort_key(x1[mid], kind);
            if (k < v || (right && k == v))
                lo = mid + 1;
            else
                hi = mid;
        }
        y[i] = (u32)lo;
    }
}

/* ------------------------------------------------------------------ memory */

/* Blocks [header | payload] laid end to end from heap_lo to heap_hi; the header keeps the block's size
 * and its predecessor's (O(1) coalescing on free). No two free blocks are ever adjacent, and the last
 * block is never free (freeing it lowers heap_hi). Payloads are 16-byte aligned. */
typedef struct {
    u32 size; /* bytes, header included */
    u32 prev; /* size of the block before, 0 for the first */
    u32 used;
    u32 pad;
} block;

#define HDR 16u
#define PAGE 65536ull

extern unsigned char __heap_base;
static u32 heap_lo, heap_hi, heap_last, live_bytes;

INLINE block *blk(u32 p) { return (block *)(unsigned long)p; }

static void heap_init(void) {
    if (!heap_lo) heap_lo = heap_hi = ((u32)(unsigned long)&__heap_base + 15u) & ~15u;
}

static int ensure_memory(u64 end) {
    u64 have = (u64)__builtin_wasm_memory_size(0) * PAGE;
    if (end <= have) return 1;
    u64 pages = (end - have + PAGE - 1) / PAGE;
    return __builtin_wasm_memory_grow(0, (unsigned long)pages) != (unsigned long)-1;
}

/* a pointer to nbytes (16-byte aligned), or 0 when linear memory cannot grow that far */
EXPORT void *tw_alloc(u32 nbytes) {
    heap_init();
    if (nbytes > 0xFFFF0000u) return 0;
    u32 need = ((nbytes + 15u) & ~15u) + HDR;
    for (u32 p = heap_lo; p < heap_hi; p += blk(p)->size) {
        block *b = blk(p);
        if (b->used || b->size < need) continue;
        if (b->size - need >= 64u) { /* split: the rest stays free (its successor is used) */
            u32 q = p + need;
            blk(q)->size = b->size - need;
            blk(q)->prev = need;
            blk(q)->used = 0;
            if (q + blk(q)->size < heap_hi) blk(q + blk(q)->size)->prev = blk(q)->size;
            b->size = need;
        }
        b->used = 1;
        live_bytes += b->size;
        return (void *)(unsigned long)(p + HDR);
    }
    u64 end = (u64)heap_hi + need;
    if (end > 0xFFFFFFF0ull || !ensure_memory(end)) return 0;
    u32 p = heap_hi;
    blk(p)->size = need;
    blk(p)->prev = heap_last ? blk(heap_last)->size : 0;
    blk(p)->used = 1;
    heap_last = p;
    heap_hi = (u32)end;
    live_bytes += need;
    return (void *)(unsigned long)(p + HDR);
}

EXPORT void tw_free(void *ptr) {
    if (!ptr) return;
    u32 p = (u32)(unsigned long)ptr - HDR;
    if (p < heap_lo || p >= heap_hi || (p & 15u)) return;
    block *b = blk(p);
    if (!b->used) return;
    b->used = 0;
    live_bytes -= b->size;
    u32 next = p + b->size;
    if (next < heap_hi && !blk(next)->used) { /* merge the free successor */
        if (next == heap_last) heap_last = p;
        b->size += blk(next)->size;
    }
    if (p != heap_lo && !blk(p - b->prev)->used) { /* merge into the free predecessor */
        u32 q = p - b->prev;
        if (p == heap_last) heap_last = q;
        blk(q)->size += b->size;
        p = q;
        b = blk(p);
    }
    next = p + b->size;
    if (next < heap_hi) {
        blk(next)->prev = b->size;
    } else { /* the free block is the last: give it back to the top */
        heap_hi = p;
        heap_last = p == heap_lo ? 0 : p - b->prev;
    }
}

/* forget every allocation */
EXPORT void tw_reset(void) {
    heap_init();
    heap_hi = heap_lo;
    heap_last = 0;
    live_bytes = 0;
}

/* bytes held by live allocations (headers included), for leak checks */
EXPORT u32 tw_live_bytes(void) { return live_bytes; }

/* 1 when built with -msimd128 */
EXPORT int tw_simd(void) {
#ifdef __wasm_simd128__
    return 1;
#else
    return 0;
#endif
}
