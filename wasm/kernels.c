/* trueno_web: CPU kernels for the "wasm-simd" backend, one small freestanding WebAssembly module.
 *
 * Built by `python wasm/build.py` with -msimd128 into trueno_web/kernels.wasm (shipped in the wheel);
 * `python wasm/build.py --scalar` builds the same source without -msimd128 into build/ (benchmarks).
 * No libc: exp/expm1/log are written here, on 4-lane vectors.
 *
 * Vectors are clang vector extensions (f4 = 4 x f32): with -msimd128 they are v128 and the few
 * operations that need a specific instruction use <wasm_simd128.h>; without it clang lowers them to
 * scalar code, which is the scalar build.
 *
 * Semantics follow shaders/functions.wgsl (the WebGPU backend): relu keeps NaN; swish/gelu/mish/
 * hardswish of -inf are -0 (the floor_finite trick: -inf -> -FLT_MAX so x * 0 is -0); tanh saturates;
 * max/min propagate NaN; exp overflows to +inf and underflows to 0. NaN is tested on the bits.
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
typedef unsigned long long u64;
typedef float f4 __attribute__((vector_size(16)));
typedef int i4 __attribute__((vector_size(16)));
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
INLINE f4 floor_finite(f4 x) { return sel(x < -F32_MAX, splat(-F32_MAX), x); }

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

INLINE float hsum(f4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }

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
    i4 k; /* x = k ln2 + r */
    f4 e; /* e^x */
} exp_parts;

/* Cephes expf reduction and polynomial (~1 ulp). x is clamped to [-110, 89]: below, e^x is 0 (and the
 * two-step scale by 2^k1 * 2^k2 keeps subnormal results right); above, +inf. NaN stays NaN. */
INLINE exp_parts exp_split(f4 x) {
    x = sel(x < -110.0f, splat(-110.0f), x);
    x = sel(x > 89.0f, splat(89.0f), x);
    f4 t = x * LOG2E + ROUND_MAGIC;
    f4 kf = t - ROUND_MAGIC;
    i4 k = as_i(t) - as_i(splat(ROUND_MAGIC));
    f4 r = (x - kf * LN2_HI) - kf * LN2_LO;
    f4 z = r * r;
    f4 p = (((((1.9875691500E-4f * r + 1.3981999507E-3f) * r + 8.3334519073E-3f) * r + 4.1665795894E-2f) * r +
             1.6666665459E-1f) * r + 5.0000001201E-1f) * z + r;
    i4 k1 = k >> 1;
    f4 e = ((1.0f + p) * pow2i(k1)) * pow2i(k - k1);
    return (exp_parts){p, k, e};
}

INLINE f4 v_exp(f4 x) { return exp_split(x).e; }

/* e^x - 1 without cancellation near 0 (k == 0: the polynomial itself) */
INLINE f4 v_expm1(f4 x) {
    exp_parts s = exp_split(x);
    return sel(s.k == 0, s.p, s.e - 1.0f);
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

/* ------------------------------------------------------------------ the elementwise ops */

INLINE f4 op_relu(f4 x) { return sel((x > 0.0f) | is_nan(x), x, splat(0.0f)); }
INLINE f4 op_leaky_relu(f4 x, float s) { return sel(x > 0.0f, x, x * s); }
INLINE f4 op_elu(f4 x, float a) { return sel(x > 0.0f, x, a * v_expm1(x)); }
INLINE f4 op_sigmoid(f4 x) { return 1.0f / (1.0f + v_exp(-x)); }
/* tanh = expm1(2|x|) / (expm1(2|x|) + 2), exact near 0; saturates to +-1 past |x| = 9 (tanh(9) is 1 in f32) */
INLINE f4 op_tanh(f4 x) {
    f4 ax = vabs(x);
    f4 e = v_expm1(ax + ax);
    f4 t = sel(ax > 9.0f, splat(1.0f), e / (e + 2.0f));
    return copysign4(t, x);
}
INLINE f4 op_swish(f4 x) { return floor_finite(x) * op_sigmoid(x); }
/* 0.5 v (1 + tanh(u)) = v / (1 + exp(-2u)): same function, no cancellation for negative v */
INLINE f4 op_gelu(f4 x) {
    f4 v = floor_finite(x);
    f4 u = GELU_C * (v + 0.044715f * v * v * v);
    return v / (1.0f + v_exp(-(u + u)));
}
/* x tanh(softplus(x)) = x n / (n + 2) with n = e^x (e^x + 2); past x = 20 it is x in f32 */
INLINE f4 op_mish(f4 x) {
    f4 u = v_exp(x);
    f4 n = u * (u + 2.0f);
    return sel(x > 20.0f, x, floor_finite(x) * (n / (n + 2.0f)));
}
INLINE f4 op_selu(f4 x) { return SELU_SCALE * sel(x > 0.0f, x, SELU_ALPHA * v_expm1(x)); }
INLINE f4 op_hardswish(f4 x) {
    f4 v = floor_finite(x);
    f4 r = v + 3.0f;
    r = sel(r < 0.0f, splat(0.0f), r);
    r = sel(r > 6.0f, splat(6.0f), r);
    return v * r / 6.0f; /* as WGSL: v * r overflows to inf for v > FLT_MAX / 6 on every backend */
}
INLINE f4 op_clip(f4 x, float lo, float hi) {
    f4 low = sel(x < lo, splat(lo), x);
    f4 r = sel(low > hi, splat(hi), low);
    return sel(is_nan(splat(lo)) | is_nan(splat(hi)), splat(lo + hi), r); /* a NaN bound gives NaN, as in NumPy */
}

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

/* ------------------------------------------------------------------ reductions */

/* Sums are pairwise over blocks of RBLOCK elements; inside a block 16 lanes accumulate 128 terms each,
 * so the error grows like log(n), not n. */
#define RBLOCK 2048

typedef float (*block_fn)(const float *a, const float *b, int n);

#define BLOCK_SUM(NAME, TERM, STERM)                                                \
    static float NAME(const float *a, const float *b, int n) {                      \
        (void)b;                                                                    \
        f4 s0 = splat(0.0f), s1 = s0, s2 = s0, s3 = s0;                             \
        int i = 0;                                                                  \
        for (; i + 16 <= n; i += 16) {                                              \
            s0 += TERM(i);                                                          \
            s1 += TERM(i + 4);                                                      \
            s2 += TERM(i + 8);                                                      \
            s3 += TERM(i + 12);                                                     \
        }                                                                           \
        for (; i + 4 <= n; i += 4) s0 += TERM(i);                                   \
        float t = 0.0f;                                                             \
        for (; i < n; i++) t += STERM(i);                                           \
        return hsum((s0 + s1) + (s2 + s3)) + t;                                     \
    }

#define T_SUM(i) ld(a + (i))
#define S_SUM(i) a[i]
#define T_DOT(i) (ld(a + (i)) * ld(b + (i)))
#define S_DOT(i) (a[i] * b[i])
#define T_L1(i) vabs(ld(a + (i)))
#define S_L1(i) __builtin_fabsf(a[i])
#define T_SQ(i) (ld(a + (i)) * ld(a + (i)))
#define S_SQ(i) (a[i] * a[i])

BLOCK_SUM(block_sum, T_SUM, S_SUM)
BLOCK_SUM(block_dot, T_DOT, S_DOT)
BLOCK_SUM(block_l1, T_L1, S_L1)
BLOCK_SUM(block_sq, T_SQ, S_SQ)

static float pairwise(block_fn f, const float *a, const float *b, int n) {
    if (n <= RBLOCK) return f(a, b, n);
    int h = ((n / 2) + RBLOCK - 1) / RBLOCK * RBLOCK; /* 0 < h < n */
    return pairwise(f, a, b, h) + pairwise(f, a + h, b ? b + h : b, n - h);
}

EXPORT float tw_sum(const float *x, int n) { return pairwise(block_sum, x, 0, n); }
EXPORT float tw_dot(const float *a, const float *b, int n) { return pairwise(block_dot, a, b, n); }
EXPORT float tw_norm_l1(const float *x, int n) { return pairwise(block_l1, x, 0, n); }

/* sqrt(sum(x^2)) in f32 like the other backends: x^2 overflows to inf for |x| > 1.8e19 (no rescaling) */
EXPORT float tw_norm_l2(const float *x, int n) { return __builtin_sqrtf(pairwise(block_sq, x, 0, n)); }

#define EXTREME(NAME, FN, IDENT)                                                    \
    EXPORT float tw_##NAME(const float *x, int n) {                                 \
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

/* ------------------------------------------------------------------ softmax */

/* Row by row along the last axis: NaN-propagating max, y = exp(x - max), s = pairwise sum of y,
 * then y / s (or x - max - log s). */
EXPORT void tw_softmax(const float *x, float *y, int rows, int cols, int log) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (long)r * cols;
        float *yr = y + (long)r * cols;
        f4 m = splat(tw_max(xr, cols));
        int j = 0;
        for (; j + 4 <= cols; j += 4) st(yr + j, v_exp(ld(xr + j) - m));
        if (j < cols) st_tail(yr + j, v_exp(ld_tail(xr + j, cols - j, 0.0f) - m), cols - j);
        f4 s = splat(pairwise(block_sum, yr, 0, cols));
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
