// trueno_web: the per-op WGSL functions. One function per catalog row (trueno_web/ops.py), each within the
// row's ulp bound (docs/accuracy.md).
// Single kernels and fused kernels call the same functions, so both compute the same numbers.
// NaN is tested on the bits (never with x != x, which a compiler may fold away), and
// comparisons are arranged so that NaN falls through to the NaN-propagating branch.

const TW_F32_MAX: f32 = 3.4028234663852886e38;
const TW_SELU_ALPHA: f32 = 1.6732632423543772;
const TW_SELU_SCALE: f32 = 1.0507009873554805;
// gelu's exponent 2 sqrt(2/pi) (x + k x^3) and k = 0.044715, each as float32 + the rest
const TW_GELU_2C: f32 = 1.5957691669464111;
const TW_GELU_2C_LO: f32 = -4.534068054340423e-08;
const TW_GELU_K: f32 = 0.044714998453855515;
const TW_GELU_K_LO: f32 = 1.5461444347053543e-09;

// Infinities and NaN come from a private variable's bits: WGSL compilers (Tint) refuse NaN and Inf
// in constant expressions, and a private variable is not one.
var<private> TW_INF_BITS: u32 = 0x7f800000u;
fn tw_inf() -> f32 { return bitcast<f32>(TW_INF_BITS); }
fn tw_neg_inf() -> f32 { return bitcast<f32>(TW_INF_BITS | 0x80000000u); }
fn tw_nan() -> f32 { return bitcast<f32>(TW_INF_BITS | 0x00400000u); }

fn tw_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
// |x| < 2^-25, where expm1(x) and tanh(x) round to x; tested on the bits, so that a subnormal x (which a GPU
// may flush in arithmetic and comparisons) is passed through as itself, and the sign of zero kept
fn tw_tiny(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x33000000u; }

// ---------------------------------------------------------------- exp, expm1, log (our own)
// WGSL leaves the accuracy of exp, log and tanh to the implementation (lavapipe's exp is 57 ulp off near
// -75, its log 386 ulp near 1, its tanh 2^-25 at 1e-45), so the shader set uses none of them. These follow
// wasm/kernels.c step for step (Cephes expf, logf, tanhf), within the catalog's ulp bounds (docs/accuracy.md).

// e^(t + lo) = 2^k (1 + p), t + lo = k ln2 + r (Cephes expf's reduction and polynomial; lo: the low part of a
// pair, or 0); t is clamped to [-120, 89]: below, s e^t rounds to 0 for any |s| < 2^20 (callers keep s there);
// above, e^t is +inf. NaN: callers.
struct TwExpParts { p: f32, k: i32 }
fn tw_exp_split(t: f32, lo: f32) -> TwExpParts {
    let x = min(max(t, -120.0), 89.0);
    let kf = round(x * 1.44269504088896341);
    let r = ((x - kf * 0.693359375) - kf * -2.12194440e-4) + lo;
    let z = r * r;
    let p = (((((1.9875691500e-4 * r + 1.3981999507e-3) * r + 8.3334519073e-3) * r + 4.1665795894e-2) * r
             + 1.6666665459e-1) * r + 5.0000001201e-1) * z + r;
    return TwExpParts(p, i32(kf));
}
fn tw_pow2(k: i32) -> f32 { return bitcast<f32>(u32(k + 127) << 23u); }  // -126 <= k <= 127
// s e^t from its parts: s (1 + p) scaled by 2^k in two exact steps, so that only the last one rounds (into
// the subnormals where the result is one) and no intermediate is subnormal
fn tw_scale2k(e: TwExpParts, s: f32) -> f32 {
    let k1 = e.k >> 1u;
    return ((s * (1.0 + e.p)) * tw_pow2(k1)) * tw_pow2(e.k - k1);
}
fn tw_exp(x: f32) -> f32 { return select(tw_scale2k(tw_exp_split(x, 0.0), 1.0), x, tw_isnan(x)); }
// 2^t for t <= 0 (fused attention's p and rescale, its scores in log2 units): 2^k 2^f, t = k + f, |f| <= 1/2,
// 2^f by a minimax polynomial (within 0.94 ulp with fused multiply-adds); 0 below 2^-126.5 (flushed: a p that
// small adds nothing to a row whose largest p is 1), NaN passed through (by a select: a GPU's max may drop it);
// fewer instructions than tw_exp. 2^k is k + 127 shifted into the exponent, taken from the low mantissa bits of
// k + 2^23 + 127 (exact for k in [-127, 0]: no float-to-integer conversion).
fn tw_exp2_neg(t: f32) -> f32 {
    let x = max(t, -127.0);
    let kf = round(x);
    let f = x - kf;
    let p = (((((1.53536050e-4 * f + 1.33988704e-3) * f + 9.61843692e-3) * f + 5.55033237e-2) * f
             + 2.40226477e-1) * f + 6.93147182e-1) * f + 1.0;
    return select(p * bitcast<f32>(bitcast<u32>(kf + 8388735.0) << 23u), t, tw_isnan(t));
}
// e^x - 1 without cancellation: p itself for k = 0, else 2^k p + (2^k - 1) (exact 2^k - 1 for k <= 24); past
// k = 24, e^x (scaled in two steps: 2^128 alone would overflow below e^x's own overflow at 88.72)
fn tw_expm1(x: f32) -> f32 {
    let s = tw_exp_split(x, 0.0);
    let k1 = s.k >> 1u;
    let two_k = tw_pow2(k1) * tw_pow2(s.k - k1);
    let v = select(select(two_k * s.p + (two_k - 1.0), tw_scale2k(s, 1.0), s.k > 24), s.p, s.k == 0);
    return select(v, x, tw_tiny(x) || tw_isnan(x));
}
// Cephes logf: x = 2^e m, m in [sqrt(1/2), sqrt(2)); a subnormal x is normalised through an integer (exact, and
// no subnormal arithmetic); log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf
fn tw_log(x: f32) -> f32 {
    let xb = bitcast<u32>(x);
    var bits = xb;
    var e = i32(bits >> 23u) - 126;
    if (bits < 0x800000u) {
        bits = bitcast<u32>(f32(bits));                       // x 2^149, exactly
        e = i32(bits >> 23u) - 275;
    }
    let m = bitcast<f32>((bits & 0x7fffffu) | 0x3f000000u);   // [0.5, 1)
    let small = m < 0.707106781186547524;
    let f = select(m, m + m, small) - 1.0;
    let ef = f32(e - select(0, 1, small));
    let z = f * f;
    var y = ((((((((7.0376836292e-2 * f - 1.1514610310e-1) * f + 1.1676998740e-1) * f - 1.2420140846e-1) * f
              + 1.4249322787e-1) * f - 1.6668057665e-1) * f + 2.0000714765e-1) * f - 2.4999993993e-1) * f
              + 3.3333331174e-1) * f * z;
    y = y + ef * -2.12194440e-4;
    y = y - 0.5 * z;
    let r = (f + y) + ef * 0.693359375;
    let special = select(select(r, tw_inf(), xb == TW_INF_BITS), tw_nan(), xb > TW_INF_BITS);
    return select(special, tw_neg_inf(), (xb & 0x7fffffffu) == 0u);
}

// a * b = p.x + p.y exactly (Dekker's product with 12-bit halves)
fn tw_two_prod(a: f32, b: f32) -> vec2<f32> {
    let p = a * b;
    let ah = tw_hi12(a);
    let al = a - ah;
    let bh = tw_hi12(b);
    let bl = b - bh;
    return vec2<f32>(p, (((ah * bh - p) + ah * bl) + al * bh) + al * bl);
}

// ---------------------------------------------------------------- the elementwise ops

// relu and leaky_relu decide on the bits: a GPU that flushes subnormals compares a subnormal as 0 (NVIDIA)
fn tw_relu(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    return bitcast<f32>(select(0u, b, b < 0x80000000u || tw_isnan(x)));
}
fn tw_leaky_relu(x: f32, slope: f32) -> f32 {
    let b = bitcast<u32>(x);
    return select(slope * x, x, b - 1u < 0x7fffffffu);        // x > 0: +0 < x <= +inf, or a positive NaN
}
fn tw_elu(x: f32, alpha: f32) -> f32 { return select(alpha * tw_expm1(x), x, x > 0.0); }
fn tw_selu(x: f32) -> f32 { return TW_SELU_SCALE * select(TW_SELU_ALPHA * tw_expm1(x), x, x > 0.0); }
// 1 / (1 + e^-x) for x >= 0, e^x / (1 + e^x) below (no overflow of e^-x, subnormal results kept)
fn tw_sigmoid(x: f32) -> f32 {
    let e = tw_exp(-abs(x));
    let d = 1.0 + e;
    return select(select(1.0 / d, e / d, x < 0.0), x, tw_isnan(x));
}
// Cephes tanhf: an odd polynomial below |x| = 0.625, else 1 - 2 / (e^2|x| + 1) with expm1;
// +-1 past |x| = 9; x itself where tiny
fn tw_tanh(x: f32) -> f32 {
    let ax = abs(x);
    let z = x * x;
    let poly = ((((-5.70498872745e-3 * z + 2.06390887954e-2) * z - 5.37397155531e-2) * z + 1.33314422036e-1) * z
                - 3.33332819422e-1) * z * x + x;
    let e = tw_expm1(ax + ax);
    let t = select(1.0 - 2.0 / (e + 2.0), 1.0, ax > 9.0);      // never past 1, even with an approximate divide
    let r = select(select(t, -t, x < 0.0), poly, ax < 0.625);
    return select(r, x, tw_tiny(x) || tw_isnan(x));
}
// x / (1 + e^-x) for x >= 0; below, x e^x / (1 + e^x) with e^x scaled last (x < -120 gives -0)
fn tw_swish(x: f32) -> f32 {
    let s = tw_exp_split(-abs(x), 0.0);
    let d = 1.0 + tw_scale2k(s, 1.0);
    return select(select(x / d, tw_scale2k(s, max(x, -120.0) / d), x < 0.0), x, tw_isnan(x));
}
// gelu's exponent t = 2 sqrt(2/pi) v (1 + k v^2) as a pair t.x + t.y (|v| <= 20): float32 alone would leave
// t wrong by ~|t| 2^-23, which e^t turns into ~|t| ulps (~90 at x = -10)
fn tw_gelu_exponent(v: f32) -> vec2<f32> {
    let s = tw_two_prod(v, v);
    let q = tw_two_prod(TW_GELU_K, s.x);
    let ql = q.y + (TW_GELU_K * s.y + TW_GELU_K_LO * s.x);
    let wh = tw_hi12(1.0 + q.x);                             // 1 + q = wh + wl: 1 - wh is exact (no two-sum,
    let wl = ((1.0 - wh) + q.x) + ql;                        // which a compiler may fold: lavapipe does)
    let cv = tw_two_prod(TW_GELU_2C, v);
    let t = tw_two_prod(cv.x, wh);
    return vec2<f32>(t.x, t.y + (cv.x * wl + (cv.y + TW_GELU_2C_LO * v) * wh));
}
// 0.5 x (1 + tanh(u)) = x / (1 + e^-t), t = 2u, for x >= 0; x e^t / (1 + e^t) below (no cancellation in
// 1 + tanh, e^t scaled last); the cubic on x clamped to [-20, 20] (gelu is x or -0 long before: no overflow)
fn tw_gelu(x: f32) -> f32 {
    let v = min(max(x, -20.0), 20.0);
    let t = tw_gelu_exponent(v);
    let s = tw_exp_split(-abs(t.x), select(-t.y, t.y, x < 0.0));
    let d = 1.0 + tw_scale2k(s, 1.0);
    return select(select(x / d, tw_scale2k(s, v / d), x < 0.0), x, tw_isnan(x));
}
// x tanh(softplus(x)) = x n / (n + 2), n = e^x (e^x + 2); for x < 0, x (e^x + 2) / (n + 2) times e^x scaled
// last (x < -120 gives -0); past x = 20 it is x in float32
fn tw_mish(x: f32) -> f32 {
    let v = min(max(x, -120.0), 20.0);
    let s = tw_exp_split(v, 0.0);
    let e = tw_scale2k(s, 1.0);
    let n = e * (e + 2.0);
    let r = select(x * (n / (n + 2.0)), tw_scale2k(s, v * (e + 2.0) / (n + 2.0)), x < 0.0);
    return select(r, x, x > 20.0 || tw_isnan(x));
}
// x past 3, -0 below -3, else x (x + 3) / 6: no x * 6 to overflow
fn tw_hardswish(x: f32) -> f32 {
    let mid = x * (x + 3.0) / 6.0;
    let r = select(select(mid, bitcast<f32>(bitcast<u32>(x) & 0x80000000u), x <= -3.0), x, x >= 3.0);
    return select(r, x, tw_isnan(x));
}
fn tw_clip(x: f32, lo: f32, hi: f32) -> f32 {
    let low = select(x, lo, x < lo);
    let r = select(low, hi, low > hi);
    return select(r, tw_nan(), tw_isnan(x) || tw_isnan(lo) || tw_isnan(hi));  // a NaN bound gives NaN, as in NumPy
}
fn tw_scale(x: f32, s: f32) -> f32 { return x * s; }
fn tw_add(a: f32, b: f32) -> f32 { return a + b; }
fn tw_sub(a: f32, b: f32) -> f32 { return a - b; }
// Compensated sums: a running sum as a float32 pair (sum, error), so its error does not grow with the count.
// tw_one is 1.0 read from tw_meta[7] by each reduction kernel: the compiler cannot see its value, so it
// cannot fold the two-sum's error (s - big) - small to 0 as a finite-math compiler (NVIDIA's) does otherwise;
// s * tw_one is exact. A kernel that forgets to set it gets wrong sums (it is 0), never silently plain ones.
var<private> tw_one: f32;
fn tw_two_sum(a: f32, b: f32) -> vec2<f32> {  // a + b and its rounding error (Dekker's fast two-sum)
    let swap = abs(a) < abs(b);
    let big = select(a, b, swap);
    let small = select(b, a, swap);
    let s = big + small;
    return vec2<f32>(s, small - (s * tw_one - big));
}
fn tw_pair(x: f32) -> vec2<f32> { return vec2<f32>(x, 0.0); }
fn tw_pair_add(p: vec2<f32>, q: vec2<f32>) -> vec2<f32> {
    let t = tw_two_sum(p.x, q.x);
    return vec2<f32>(t.x, t.y + (p.y + q.y));
}
// One thread's running sum: (sum, sum of the rounding errors), each element added with Knuth's branch-free
// two-sum, so that the loop carries one add in each (no compare or select on the way); threads' states
// then combine with tw_pair_add. tw_one keeps the error terms from folding as above (b * tw_one is exact).
fn tw_lane_add(p: vec2<f32>, x: f32) -> vec2<f32> {
    let s = p.x + x;
    let b = s * tw_one - p.x;
    return vec2<f32>(s, p.y + ((p.x - (s - b * tw_one)) + (x - b)));
}
// four lanes' running sums, one vec4 of elements a step; tw_lanes_pair folds the lanes at the end
fn tw_lanes_add(p: mat4x2<f32>, v: vec4<f32>) -> mat4x2<f32> {
    return mat4x2<f32>(tw_lane_add(p[0], v.x), tw_lane_add(p[1], v.y), tw_lane_add(p[2], v.z), tw_lane_add(p[3], v.w));
}
fn tw_lanes_pair(p: mat4x2<f32>) -> vec2<f32> { return tw_pair_add(tw_pair_add(p[0], p[1]), tw_pair_add(p[2], p[3])); }
// the pair's value; an infinite or NaN sum as it is (its error term is NaN then)
fn tw_pair_value(p: vec2<f32>) -> f32 {
    return select(p.x + p.y, p.x, (bitcast<u32>(p.x) & 0x7f800000u) == 0x7f800000u);
}
// A row's moments for var and layer_norm's sums of squares (kernels/rows.py centred_squares): (sum pair, sum
// of squares about the mean, count) of a thread's elements, combined across threads by Chan's update (the
// squares of the two means' difference, weighted by the counts): no second pass over the row for the squares.
// The means are pairs (tw_pair_mean), so their difference keeps its digits where the mean is far from 0.
fn tw_moments_add(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    let n = a.w + b.w;
    let ma = tw_pair_mean(a.xy, a.w);
    let mb = tw_pair_mean(b.xy, b.w);
    let d = (mb.x - ma.x) + (mb.y - ma.y);
    let m2 = a.z + b.z + select(d * d * (a.w * (b.w / n)), 0.0, a.w == 0.0 || b.w == 0.0);
    return vec4<f32>(tw_pair_add(a.xy, b.xy), m2, n);
}
// s / n as a pair (q, e): q the quotient, e what q misses (the remainder s - q n exact by tw_two_prod); 0 for n 0.
// q * tw_one: a finite-math compiler would otherwise take (s.x / m) * m for s.x
fn tw_pair_mean(s: vec2<f32>, n: f32) -> vec2<f32> {
    let m = max(n, 1.0);
    let q = s.x / m;
    let p = tw_two_prod(q * tw_one, m);
    return vec2<f32>(q, (((s.x - p.x) - p.y) + s.y) / m);
}
fn tw_moments_sum(m: vec4<f32>) -> f32 { return tw_pair_value(m.xy); }
// sum((x - c)^2) of the elements whose moments are m, about any c: M2 + n (mean - c)^2
fn tw_moments_centred(m: vec4<f32>, c: f32) -> f32 {
    let mean = tw_pair_mean(m.xy, m.w);
    let d = (mean.x - c) + mean.y;
    return m.z + m.w * (d * d);
}
// the error term of a pair stored for a later fold: none where the sum is Inf or NaN (its error is NaN then)
fn tw_pair_error(p: vec2<f32>) -> f32 {
    return select(p.y, 0.0, (bitcast<u32>(p.x) & 0x7f800000u) == 0x7f800000u);
}
fn tw_mul(a: f32, b: f32) -> f32 { return a * b; }
// NaN-propagating max/min (NumPy's np.max/np.min semantics), branch-free: a NaN a is kept by the outer select,
// a NaN b by the ordered comparison (false with a NaN): a fold's chain of these is selects, not branches
fn tw_max(a: f32, b: f32) -> f32 { return select(select(b, a, a > b), a, tw_isnan(a)); }
fn tw_min(a: f32, b: f32) -> f32 { return select(select(b, a, a < b), a, tw_isnan(a)); }

fn tw_neg(x: f32) -> f32 { return -x; }
fn tw_abs(x: f32) -> f32 { return abs(x); }
fn tw_sqrt(x: f32) -> f32 { return select(sqrt(x), tw_nan(), x < 0.0); }  // sqrt(-0) = -0
fn tw_rsqrt(x: f32) -> f32 { return 1.0 / tw_sqrt(x); }  // 1 / sqrt(x) (two roundings, as NumPy's formula)
fn tw_square(x: f32) -> f32 { return x * x; }
fn tw_floor(x: f32) -> f32 { return floor(x); }
fn tw_copy(x: f32) -> f32 { return x; }
// A divisor past 2^126 has a subnormal reciprocal, which a GPU computing a * (1 / b) may flush (NVIDIA:
// inf / 3.4e38 = NaN, 100 / 3.4e38 = 0): a / 4 over b / 4 there (exact scalings).
fn tw_div(a: f32, b: f32) -> f32 {
    let big = abs(b) > 8.507059e37;
    return select(a, a * 0.25, big) / select(b, b * 0.25, big);
}

// Comparisons give 1.0 or 0.0; NaN compares false (ne: true), tested on the bits.
fn tw_ordered(a: f32, b: f32) -> bool { return !(tw_isnan(a) || tw_isnan(b)); }
// comparisons give bool (a u32 word: 1 or 0)
fn tw_lt(a: f32, b: f32) -> u32 { return select(0u, 1u, a < b && tw_ordered(a, b)); }
fn tw_le(a: f32, b: f32) -> u32 { return select(0u, 1u, a <= b && tw_ordered(a, b)); }
fn tw_gt(a: f32, b: f32) -> u32 { return select(0u, 1u, a > b && tw_ordered(a, b)); }
fn tw_ge(a: f32, b: f32) -> u32 { return select(0u, 1u, a >= b && tw_ordered(a, b)); }
fn tw_eq(a: f32, b: f32) -> u32 { return select(0u, 1u, a == b && tw_ordered(a, b)); }
fn tw_ne(a: f32, b: f32) -> u32 { return select(1u, 0u, a == b && tw_ordered(a, b)); }
// a where the bool cond, else b
fn tw_where(c: u32, a: f32, b: f32) -> f32 { return select(b, a, c != 0u); }
// float classes, on the bits (a GPU may flush subnormals in arithmetic)
fn tw_isnan_of(x: f32) -> u32 { return select(0u, 1u, tw_isnan(x)); }
fn tw_isinf_of(x: f32) -> u32 { return select(0u, 1u, (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u); }
fn tw_isfinite_of(x: f32) -> u32 { return select(0u, 1u, (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u); }
fn tw_signbit(x: f32) -> u32 { return bitcast<u32>(x) >> 31u; }

// ---------------------------------------------------------------- sin, cos
// Own argument reduction and polynomials (WGSL leaves the builtins' accuracy to the implementation, and
// software adapters lose it for large arguments). |x| <= pi/4 is used as is; past it, x = (4n + q) pi/2 + r
// by Payne-Hanek in integers: the 24-bit significand times a 96-bit window of the bits of 2/pi, which
// gives the quadrant q and the fraction exactly (to 2^-62; a fraction below 2^-17 gets 16 bits more) for
// every finite float32. r = rh + rl as a pair; Cephes' sinf/cosf polynomials on |r| <= pi/4. Float products
// that must be exact use 12-bit halves (tw_hi12). These steps in C without fused multiply-adds are within
// 1.33 ulp of sin and cos for every float32 (all 2^32 tried); lavapipe, which fuses, within 2.05 ulp.

// the fraction bits of 2/pi, after one word of zeros (a window may start before the binary point)
var<private> TW_2_OVER_PI: array<u32, 8> = array<u32, 8>(0u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
                                                         0xdb629599u, 0x3c439041u, 0xfe5163abu);

fn tw_hi12(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u); }  // 12 significant bits

// a * b as (low word, high word), from 16-bit halves
fn tw_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
    return vec2<u32>(a * b, a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u));
}

fn tw_window_word(q: u32, o: u32) -> u32 {
    let hi = TW_2_OVER_PI[q];
    return select((hi << o) | (TW_2_OVER_PI[q + 1u] >> (32u - o)), hi, o == 0u);
}

// finite |x| = ax > pi/4: (rh, rl, q) with ax = (4n + q) pi/2 + rh + rl, |rh + rl| <= pi/4
fn tw_trig_reduce(ax: f32) -> vec3<f32> {
    let bits = bitcast<u32>(ax);
    let m = (bits & 0x7fffffu) | 0x800000u;                 // ax = m 2^(e - 150)
    let s = (bits >> 23u) - 120u;                            // first window bit: 2/pi's bit e - 151, after 32 zeros
    let q = s >> 5u;
    let o = s & 31u;
    let w2 = tw_mul_wide(m, tw_window_word(q + 2u, o));
    let w1 = tw_mul_wide(m, tw_window_word(q + 1u, o));
    let l0 = m * tw_window_word(q, o);
    let b = w2.y + w1.x;                                     // product bits 32..63
    let a = w1.y + l0 + select(0u, 1u, b < w2.y);            // bits 64..95: 94, 95 are the quadrant
    var f = (a << 2u) | (b >> 30u);                          // the fraction's 32 bits, then 30 more in g
    var g = b << 2u;
    let quadrant = (a >> 30u) + (f >> 31u);                  // rounded to the nearest quadrant: f signed
    var scale = 2.3283064365386963e-10;                      // 2^-32
    if (f + 32768u < 65536u) {                               // |fraction| < 2^-17: 16 bits more
        f = (f << 16u) | (g >> 16u);
        g = g << 16u;
        scale = 3.552713678800501e-15;                       // 2^-48
    }
    let fh = f32(bitcast<i32>(f & 0xffffff00u));             // exact; fraction = (fh + fl) scale
    let fl = f32(f & 0xffu) + f32(g >> 8u) * 5.9604644775390625e-8;
    let ah = tw_hi12(fh);
    let p0 = ah * 1.5703125;                                 // pi/2 = 1.5703125 + 4.838267923e-4
    let rest = (fh - ah) * 1.5703125 + (fh * 4.838267923e-4 + fl * 1.5707963267948966);
    let rh = tw_hi12(p0 + rest);
    let rl = (p0 - rh) + rest;
    return vec3<f32>(rh * scale, rl * scale, f32(quadrant & 3u));
}

fn tw_sin_poly(rh: f32, rl: f32) -> f32 {
    let r = rh + rl;
    let z = r * r;
    return rh + (rl + ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r);
}
fn tw_cos_poly(rh: f32, rl: f32) -> f32 {
    let r = rh + rl;
    let z = r * r;
    return ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
}

// sin (k = 0) or cos (k = 1) of x: the polynomial of quadrant q + k
fn tw_sincos(x: f32, k: u32) -> f32 {
    let ax = abs(x);
    var red = vec3<f32>(ax, 0.0, 0.0);
    if (ax > 0.78539816) { red = tw_trig_reduce(ax); }
    let q = u32(red.z) + k;
    let v = select(tw_sin_poly(red.x, red.y), tw_cos_poly(red.x, red.y), (q & 1u) == 1u);
    let signed = select(v, -v, (q & 2u) == 2u);
    let odd = select(signed, -signed, k == 0u && bitcast<u32>(x) >= 0x80000000u);   // sin(-x) = -sin(x); cos is even
    return select(odd, tw_nan(), (bitcast<u32>(x) & 0x7fffffffu) >= TW_INF_BITS);
}
fn tw_sin(x: f32) -> f32 { return tw_sincos(x, 0u); }
fn tw_cos(x: f32) -> f32 { return tw_sincos(x, 1u); }

// ---------------------------------------------------------------- pow
// a ** b as C99 powf / np.power: pow(x, +-0) = 1 and pow(1, y) = 1 even for NaN; a negative base needs an
// integer exponent (else NaN) and is negative for an odd one; 0 ** negative = inf; +-inf exponents by |x|
// against 1. Otherwise |x|^y = 2^(y log2|x|) with log2|x| to ~2^-30 relative as a pair (Lh 12 bits, Ll),
// y split in 12-bit halves so that t = y log2|x| = th + tl with th exact: within ~3 ulp of the true power
// (measured on 10^7 pairs; ~1 ulp where |y log2|x|| < 20), subnormal results included (wasm/kernels.c does
// the same).
// log2: |x| = 2^e m, m in [0.70, 1.41) (32 buckets by the top five bits of the significand);
// r = m I / 64 - 1 exactly in integers (|r| <= 1/32), log2|x| = e + T + log2(1 + r), T = log2(64 / I).
var<private> TW_LOG2_I: array<u32, 32> = array<u32, 32>(64u, 61u, 59u, 58u, 56u, 55u, 53u, 52u, 51u, 49u, 48u,
    47u, 46u, 90u, 88u, 86u, 84u, 83u, 81u, 80u, 78u, 77u, 75u, 74u, 72u, 71u, 70u, 69u, 68u, 67u, 66u, 64u);
// T to 2^-15 (so that e + T is exact) and the rest of T
var<private> TW_LOG2_TH: array<f32, 32> = array<f32, 32>(0.0, 0.06927490234375, 0.11737060546875,
    0.14202880859375, 0.192657470703125, 0.2186279296875, 0.2720947265625, 0.299560546875, 0.32757568359375,
    0.385284423828125, 0.4150390625, 0.445404052734375, 0.4764404296875, -0.491851806640625, -0.459442138671875,
    -0.42626953125, -0.392303466796875, -0.375030517578125, -0.33984375, -0.321929931640625, -0.285400390625,
    -0.26678466796875, -0.22882080078125, -0.209442138671875, -0.169921875, -0.149749755859375, -0.1292724609375,
    -0.1085205078125, -0.08746337890625, -0.06610107421875, -0.044403076171875, 0.0);
var<private> TW_LOG2_TL: array<f32, 32> = array<f32, 32>(0.0, -1.223990694e-05, -1.365483058e-05,
    -9.803721696e-06, -1.239276116e-05, 1.235678792e-05, -1.518112549e-05, -2.650160980e-07, -1.025565211e-06,
    5.732056707e-06, -1.563221190e-06, 7.095587989e-06, -2.385744438e-06, -1.289689067e-06, 1.052003427e-05,
    4.776547939e-06, -1.395598156e-05, -8.913768397e-06, -6.252884759e-06, 1.836753313e-06, -1.828237259e-06,
    -1.872726102e-06, 2.110285322e-06, -1.122695721e-05, -3.126442380e-06, 2.636354793e-06, -1.055600751e-05,
    -3.948965514e-06, 5.376559216e-07, 1.188376064e-05, 8.956813872e-06, 0.0);

// log2|x| = Lh + Ll for finite x != 0 given by the bits of |x| (subnormals too); Lh has 12 significant bits
fn tw_log2_pair(ax_bits: u32) -> vec2<f32> {  // the bits of |x|: a subnormal passed as f32 may be flushed
    var bits = ax_bits;
    var e = -127;
    if (bits < 0x800000u) {  // subnormal: normalised through an integer, as in tw_log (x 2^24 is 0 where a GPU flushes x)
        bits = bitcast<u32>(f32(bits));                      // x 2^149, exactly
        e = e - 149;
    }
    e = e + i32(bits >> 23u);
    let i = (bits >> 18u) & 31u;
    var m = (bits & 0x7fffffu) | 0x800000u;
    if (i >= 13u) { e = e + 1; } else { m = m << 1u; }     // m 2^-24 in [0.70, 1.41)
    let n = bitcast<i32>(m * TW_LOG2_I[i] - 0x40000000u);    // r 2^30, |n| < 2^25
    let nh = f32(n);
    let rh = nh * 9.313225746154785e-10;
    let rl = f32(n - i32(nh)) * 9.313225746154785e-10;
    let ah = tw_hi12(rh);
    let p0 = ah * 1.4423828125;                              // 1 / ln 2 = 1.4423828125 + 3.122283961e-4
    let p1 = (rh - ah) * 1.4423828125;
    let p2 = rh * 3.122283961e-4 + rl * 1.4426950408889634;
    let r = rh + rl;
    // log(1 + r) - r = r^2 (-1/2 + r/3 - r^2/4 + ...), |r| <= 1/32
    let q = r * r * (-0.5 + r * (0.333333333 + r * (-0.25 + r * (0.2 + r * (-0.166666667 + r * 0.142857143)))));
    let ql = q * 1.4426950408889634;
    let big = f32(e) + TW_LOG2_TH[i];                        // exact
    let h = tw_hi12(((big + p0) + p1) + ql);
    return vec2<f32>(h, ((((big - h) + p0) + p1) + ql) + (p2 + TW_LOG2_TL[i]));
}

// |x|^y for finite x != 0 (given by the bits of |x|) and finite y != 0
fn tw_pow_core(ax_bits: u32, y: f32) -> f32 {
    let l = tw_log2_pair(ax_bits);
    let yh = tw_hi12(y);
    let th = yh * l.x;                                       // exact
    let tl = (y - yh) * l.x + y * l.y;
    let t = th + tl;
    if (t > 200.0) { return tw_inf(); }
    if (t < -200.0) { return 0.0; }
    let k = round(t);
    let d = th - k;                                          // exact
    let f = d + tl;                                          // |f| <= 1/2
    let ferr = tl - (f - d);
    let u = f * 0.6931471805599453;
    let p = u * (1.0 + u * (0.5 + u * (0.166666667 + u * (0.0416666667 + u * (0.00833333333 + u * (0.00138888889
            + u * 0.000198412698))))));
    let v = 1.0 + (p + ferr * 0.6931471805599453 * (1.0 + p));
    let ki = clamp(i32(k), -160, 130);
    let k1 = ki >> 1u;
    return v * bitcast<f32>(u32(k1 + 127) << 23u) * bitcast<f32>(u32(ki - k1 + 127) << 23u);
}

fn tw_pow(x: f32, y: f32) -> f32 {
    let bx = bitcast<u32>(x);
    let ix = bx & 0x7fffffffu;
    let iy = bitcast<u32>(y) & 0x7fffffffu;
    if (iy == 0u || bx == 0x3f800000u) { return 1.0; }
    if (ix > TW_INF_BITS || iy > TW_INF_BITS) { return tw_nan(); }
    let ax = abs(x);
    if (iy == TW_INF_BITS) {                                  // y = +-inf
        if (ix == 0x3f800000u) { return 1.0; }
        return select(0.0, tw_inf(), (ax > 1.0) == (y > 0.0));
    }
    let integer = floor(y) == y;
    let odd = integer && floor(y * 0.5) != y * 0.5;
    // signs on the bits: a GPU that flushes subnormals (NVIDIA) reads 1e-40 > 0.0 as false, which with the
    // bits' ix != 0 above gave pow(0, 1e-40) = inf, the result of neither the value nor its flushed zero
    let y_pos = bitcast<u32>(y) < 0x80000000u;
    var mag: f32;
    if (ix == 0u) {
        mag = select(tw_inf(), 0.0, y_pos);
    } else if (ix == TW_INF_BITS) {
        mag = select(0.0, tw_inf(), y_pos);
    } else {
        if (bx >= 0x80000000u && !integer) { return tw_nan(); }
        mag = tw_pow_core(ix, y);  // the bits: abs(x) of a subnormal x is 0 where a GPU flushes it (NVIDIA)
    }
    return select(mag, -mag, odd && bx >= 0x80000000u);
}

// ---------------------------------------------------------------- the array API's elementwise functions
// The catalog's rows after floor and after div (trueno_web/ops.py), built on the functions above (tw_log, tw_expm1,
// tw_exp_split, tw_log2_pair, tw_trig_reduce), never on a WGSL builtin whose accuracy the implementation decides
// (round, ceil, trunc, floor and sqrt are exact). wasm/kernels.c does the same steps; bounds in docs/accuracy.md.

const TW_PIO2_HI: f32 = 1.5707963705062866;      // pi/2 as float32 + the rest
const TW_PIO2_LO: f32 = -4.371138828673793e-08;
const TW_PI_HI: f32 = 3.1415927410125732;
const TW_PI_LO: f32 = -8.742277657347586e-08;
const TW_PIO4_HI: f32 = 0.7853981852531433;
const TW_PIO4_LO: f32 = -2.1855694143368964e-08;
const TW_LN2_HI: f32 = 0.6931471824645996;
const TW_LN2_LO: f32 = -1.9046542121259336e-09;

fn tw_with_sign_of(v: f32, x: f32) -> f32 {
    return bitcast<f32>((bitcast<u32>(v) & 0x7fffffffu) | (bitcast<u32>(x) & 0x80000000u));
}
// round (half to even), ceil, trunc: exact builtins, x's sign kept (ceil(-0.5) = -0)
fn tw_round(x: f32) -> f32 { return select(tw_with_sign_of(round(x), x), x, tw_isnan(x)); }
fn tw_ceil(x: f32) -> f32 { return select(tw_with_sign_of(ceil(x), x), x, tw_isnan(x)); }
fn tw_trunc(x: f32) -> f32 { return select(tw_with_sign_of(trunc(x), x), x, tw_isnan(x)); }
// np.sign on the bits: +-1, +0 for +-0 (as NumPy), NaN stays NaN
fn tw_sign(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    return select(select(bitcast<f32>((b & 0x80000000u) | 0x3f800000u), 0.0, (b & 0x7fffffffu) == 0u), x, tw_isnan(x));
}
fn tw_reciprocal(x: f32) -> f32 { return tw_div(1.0, x); }
fn tw_positive(x: f32) -> f32 { return x; }
fn tw_imag(x: f32) -> f32 { return 0.0; }  // a real number's imaginary component (NaN's too)

// log(1 + x) = log(m) + log1p(t): the series of t = x itself (m = 1) where |x| < 2^-9; else m = 1 + x to 12
// significant bits (at or below it: log(m) and t never cancel much) and t = c / m, c = (1 - m) + x the rest to
// 2^-24 relative (1 - m is exact: no two-sum for a compiler to fold), |t| < 2^-11; below -0.5, 1 + x is exact
// and m it; past 2^22, log(x) + 1 / x
fn tw_log1p(x: f32) -> f32 {
    let series = abs(x) < 0.001953125;
    let m = select(select(tw_hi12(1.0 + x), 1.0 + x, x <= -0.5), 1.0, series);
    let t = select(((1.0 - m) + x) / m, x, series);
    let near = tw_log(m) + t * (1.0 - t * (0.5 - t * (0.33333334 - t * 0.25)));
    let r = select(near, tw_log(x) + 1.0 / x, x > 4194304.0);
    let special = select(select(r, tw_neg_inf(), x == -1.0), tw_nan(), x < -1.0);
    return select(special, x, tw_tiny(x) || tw_isnan(x));
}
// log2 from pow's pair log2|x| = Lh + Ll (~2^-30 relative, exact at powers of 2), rounded once
fn tw_log_special(x: f32, r: f32) -> f32 {  // log2, log10: -inf at +-0, NaN below 0 and for NaN, +inf at +inf
    let xb = bitcast<u32>(x);
    let special = select(select(r, tw_inf(), xb == TW_INF_BITS), tw_nan(), xb > TW_INF_BITS);
    return select(special, tw_neg_inf(), (xb & 0x7fffffffu) == 0u);
}
fn tw_log2(x: f32) -> f32 {
    let l = tw_log2_pair(bitcast<u32>(x) & 0x7fffffffu);
    return tw_log_special(x, l.x + l.y);
}
// log10 x = log2 x log10(2), log10(2) as 12 bits + the rest: Lh times the 12 bits is exact
fn tw_log10(x: f32) -> f32 {
    let l = tw_log2_pair(bitcast<u32>(x) & 0x7fffffffu);
    return tw_log_special(x, l.x * 0.301025390625 + (l.x * 4.605039066518657e-06 + l.y * 0.3010300099849701));
}

// e^a / 2 for 88 <= a (<= 90: +inf past 89.4) without overflowing on the way: a - 88.75 is exact, 88.75 = 128
// LN2_HI and 128 (ln2 - LN2_HI) = 0.0271608885, so e^a / 2 = 2^127 e^(a - 88.75 + 0.0271608885)
fn tw_exp_half_big(a: f32) -> f32 {
    let s = tw_exp_split(min(a, 90.0) - 88.75, 0.02716088853776455);
    return tw_scale2k(TwExpParts(s.p, s.k + 127), 1.0);
}
// sinh |x| = (E + E / (E + 1)) / 2, E = expm1|x| (no cancellation); x itself where tiny
fn tw_sinh(x: f32) -> f32 {
    let a = abs(x);
    let e = tw_expm1(min(a, 88.0));
    let r = select(0.5 * (e + e / (e + 1.0)), tw_exp_half_big(a), a >= 88.0);
    return select(tw_with_sign_of(r, x), x, tw_tiny(x) || tw_isnan(x));
}
// cosh x = 1 + E^2 / (2 (E + 1)) below 1, (e + 1 / e) / 2 above, e = e^|x|
fn tw_cosh(x: f32) -> f32 {
    let a = abs(x);
    let q = min(a, 88.0);
    let e = tw_expm1(q);
    let small = 1.0 + e * e / (2.0 * e + 2.0);
    let ex = tw_exp(q);
    let r = select(select(0.5 * ex + 0.5 / ex, small, a < 1.0), tw_exp_half_big(a), a >= 88.0);
    return select(r, x, tw_isnan(x));
}

// Cephes tanf's polynomial on sin's and cos's reduction r = rh + rl (|r| <= pi/4); -1 / tan(r) in odd quadrants
fn tw_tan(x: f32) -> f32 {
    let ax = abs(x);
    var red = vec3<f32>(ax, 0.0, 0.0);
    if (ax > 0.78539816) { red = tw_trig_reduce(ax); }
    let r = red.x + red.y;
    let z = r * r;
    let t = red.x + (red.y + (((((9.38540185543e-3 * z + 3.11992232697e-3) * z + 2.44301354525e-2) * z
                               + 5.34112807005e-2) * z + 1.33387994085e-1) * z + 3.33331568548e-1) * z * r);
    let v = select(t, -1.0 / t, (u32(red.z) & 1u) == 1u);
    let s = select(v, -v, bitcast<u32>(x) >= 0x80000000u);
    return select(s, tw_nan(), (bitcast<u32>(x) & 0x7fffffffu) >= TW_INF_BITS);
}

// Cephes asinf's polynomial: asin(a) for 0 <= a <= 0.5
fn tw_asin_poly(a: f32) -> f32 {
    let z = a * a;
    return ((((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z
            + 1.6666752422e-1) * z * a + a;
}
// asin: the polynomial up to 0.5, pi/2 - 2 asin(sqrt((1 - |x|) / 2)) past it (1 - |x| exact); NaN past 1
fn tw_asin(x: f32) -> f32 {
    let a = abs(x);
    let big = TW_PIO2_HI + (TW_PIO2_LO - 2.0 * tw_asin_poly(sqrt(0.5 * (1.0 - a))));
    let r = tw_with_sign_of(select(tw_asin_poly(a), big, a > 0.5), x);
    return select(select(r, tw_nan(), a > 1.0), x, tw_tiny(x) || tw_isnan(x));
}
// acos: pi/2 - asin(x) up to |x| = 0.5; past it 2 asin(sqrt((1 - |x|) / 2)), from pi for x < 0
fn tw_acos(x: f32) -> f32 {
    let a = abs(x);
    let p = 2.0 * tw_asin_poly(sqrt(0.5 * (1.0 - a)));
    let far = select(p, TW_PI_HI + (TW_PI_LO - p), x < 0.0);
    let r = select(TW_PIO2_HI + (TW_PIO2_LO - tw_asin_poly(x)), far, a > 0.5);
    return select(r, tw_nan(), a > 1.0 || tw_isnan(x));
}
// Cephes atanf for a >= 0: a reduced to |t| <= tan(pi/8) by pi/2 + atan(-1 / a) past tan(3pi/8) and
// pi/4 + atan((a - 1) / (a + 1)) past tan(pi/8)
fn tw_atan_pos(a: f32) -> f32 {
    let far = a > 2.414213562373095;
    let mid = a > 0.4142135623730950;
    let t = select(select(a, (a - 1.0) / (a + 1.0), mid), -1.0 / a, far);
    let hi = select(select(0.0, TW_PIO4_HI, mid), TW_PIO2_HI, far);
    let lo = select(select(0.0, TW_PIO4_LO, mid), TW_PIO2_LO, far);
    let z = t * t;
    let p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * t;
    return hi + ((lo + p) + t);
}
fn tw_atan(x: f32) -> f32 {
    return select(tw_with_sign_of(tw_atan_pos(abs(x)), x), x, tw_tiny(x) || tw_isnan(x));
}
// asinh |x| = log1p(a + a^2 / (1 + sqrt(1 + a^2))) up to 2, log(2a + 1 / (a + sqrt(a^2 + 1))) up to 2^12,
// log(a) + ln2 past it
fn tw_asinh(x: f32) -> f32 {
    let a = abs(x);
    let q = min(a, 4096.0);
    let t = q * q;
    let s = sqrt(t + 1.0);
    let small = tw_log1p(q + t / (1.0 + s));
    let mid = tw_log(2.0 * q + 1.0 / (q + s));
    let r = select(select(small, mid, a > 2.0), tw_log(a) + TW_LN2_HI, a > 4096.0);
    return select(tw_with_sign_of(r, x), x, tw_tiny(x) || tw_isnan(x));
}
// acosh x = log1p(t + sqrt(t (2 + t))), t = x - 1 (exact) up to 2, log(2x - 1 / (x + sqrt(x^2 - 1))) up to 2^12,
// log(x) + ln2 past it; NaN below 1
fn tw_acosh(x: f32) -> f32 {
    let q = min(x, 4096.0);
    let t = q - 1.0;
    let small = tw_log1p(t + sqrt(t * (2.0 + t)));
    let mid = tw_log(2.0 * q - 1.0 / (q + sqrt(q * q - 1.0)));
    let r = select(select(small, mid, x > 2.0), tw_log(x) + TW_LN2_HI, x > 4096.0);
    return select(r, tw_nan(), x < 1.0 || tw_isnan(x));
}
// atanh |x| = log1p(2a + 2a^2 / (1 - a)) / 2 below 0.5, log1p(2a / (1 - a)) / 2 above (1 - a exact there)
fn tw_atanh(x: f32) -> f32 {
    let a = abs(x);
    let d = 1.0 - a;
    let r = 0.5 * tw_log1p(select(2.0 * a + 2.0 * a * a / d, 2.0 * a / d, a >= 0.5));
    return select(select(tw_with_sign_of(r, x), tw_nan(), a > 1.0), x, tw_tiny(x) || tw_isnan(x));
}

// atan2(a, b), the angle of the point (b, a): atan(|a| / |b|) moved to b's side (pi - it where b's sign bit is
// set, -0 included) and given a's sign; C99's special values: 0 / 0 is 0 (then 0 or pi), inf / inf pi/4
fn tw_atan2(a: f32, b: f32) -> f32 {
    let ay = abs(a);
    let ax = abs(b);
    let both_inf = (bitcast<u32>(ay) == TW_INF_BITS) && (bitcast<u32>(ax) == TW_INF_BITS);
    let t = select(select(tw_atan_pos(tw_div(ay, ax)), 0.0, ay == 0.0), TW_PIO4_HI, both_inf);
    let r = select(t, TW_PI_HI + (TW_PI_LO - t), bitcast<u32>(b) >= 0x80000000u);
    return select(tw_with_sign_of(r, a), tw_nan(), tw_isnan(a) || tw_isnan(b));
}
// hypot: |a| and |b| scaled by 2^-e (e the larger one's exponent; two exact steps), sqrt(x^2 + y^2) (no overflow
// or underflow of the squares), scaled back in two steps (one rounding into the subnormals); inf where either is
// +-inf, even with a NaN
fn tw_hypot(a: f32, b: f32) -> f32 {
    let ua = bitcast<u32>(a) & 0x7fffffffu;
    let ub = bitcast<u32>(b) & 0x7fffffffu;
    let big = bitcast<f32>(max(ua, ub));
    let small = bitcast<f32>(min(ua, ub));
    let k = 127 - i32(max(ua, ub) >> 23u);                   // -127 <= k <= 127
    let k1 = k >> 1u;
    let s1 = tw_pow2(k1);
    let s2 = tw_pow2(k - k1);
    let x = (big * s1) * s2;
    let y = (small * s1) * s2;
    let r = (sqrt(x * x + y * y) * tw_pow2(-k1)) * tw_pow2(k1 - k);
    let nan = select(r, tw_nan(), ua > TW_INF_BITS || ub > TW_INF_BITS);
    return select(nan, tw_inf(), ua == TW_INF_BITS || ub == TW_INF_BITS);
}
// np.logaddexp: max(a, b) + log1p(e^d), d = -|a - b|; above d = -0.88, where that log1p is the larger term,
// max + ln2 + log1p(expm1(d) / 2) instead: ln2 as a pair (max + its head is exact near -ln2), the rest small, so
// that less cancels where the result is near 0 (its error there is absolute, ~2^-24: docs/accuracy.md); a + ln2
// where a == b (infinities too: no inf - inf)
fn tw_logaddexp(a: f32, b: f32) -> f32 {
    let m = max(a, b);
    let d = -abs(a - b);
    let r = select(m + tw_log1p(tw_exp(d)), ((m + TW_LN2_HI) + TW_LN2_LO) + tw_log1p(0.5 * tw_expm1(d)), d > -0.88);
    let same = (a + TW_LN2_HI) + TW_LN2_LO;
    return select(select(r, same, a == b), tw_nan(), tw_isnan(a) || tw_isnan(b));
}
fn tw_copysign(a: f32, b: f32) -> f32 { return tw_with_sign_of(a, b); }
// the next float32 after a toward b, on the bits (a subnormal is itself, never a flushed 0): b where a == b (zeros
// of either sign too), the smallest subnormal of b's sign after 0, else a's bits + 1 away from 0 or - 1 toward it
fn tw_nextafter(a: f32, b: f32) -> f32 {
    let ua = bitcast<u32>(a);
    let ub = bitcast<u32>(b);
    let ma = ua & 0x7fffffffu;
    let mb = ub & 0x7fffffffu;
    let ka = select(i32(ma), -i32(ma), ua >= 0x80000000u);  // ordered as the floats are, -0 = +0
    let kb = select(i32(mb), -i32(mb), ub >= 0x80000000u);
    let step = select(ua - 1u, ua + 1u, (ka < kb) == (ua < 0x80000000u));
    let r = select(select(step, (ub & 0x80000000u) | 1u, ma == 0u), ub, ka == kb);
    return select(bitcast<f32>(r), tw_nan(), ma > TW_INF_BITS || mb > TW_INF_BITS);
}
// fmod(a, b) exactly, on the bits (musl's fmodf: the significands' long division a bit at a time, at most 277
// steps; subnormals as they are): NaN for an infinite a, a zero b or a NaN; a itself where |a| < |b|
fn tw_fmod(a: f32, b: f32) -> f32 {
    let ux = bitcast<u32>(a);
    let sx = ux & 0x80000000u;
    let ix = ux & 0x7fffffffu;
    let iy = bitcast<u32>(b) & 0x7fffffffu;
    if (iy == 0u || ix >= TW_INF_BITS || iy > TW_INF_BITS) { return tw_nan(); }
    if (ix < iy) { return a; }
    var ex = i32(ix >> 23u);
    var ey = i32(iy >> 23u);
    var mx = (ix & 0x7fffffu) | 0x800000u;
    var my = (iy & 0x7fffffu) | 0x800000u;
    if (ex == 0) {
        let sh = countLeadingZeros(ix) - 8u;
        mx = ix << sh;
        ex = 1 - i32(sh);
    }
    if (ey == 0) {
        let sh = countLeadingZeros(iy) - 8u;
        my = iy << sh;
        ey = 1 - i32(sh);
    }
    for (; ex > ey; ex = ex - 1) {
        if (mx >= my) { mx = mx - my; }
        if (mx == 0u) { return bitcast<f32>(sx); }
        mx = mx << 1u;
    }
    if (mx >= my) { mx = mx - my; }
    if (mx == 0u) { return bitcast<f32>(sx); }
    let sh = countLeadingZeros(mx) - 8u;
    mx = mx << sh;
    ex = ex - i32(sh);
    let bits = select(mx >> u32(1 - ex), (mx - 0x800000u) | (u32(ex) << 23u), ex > 0);
    return bitcast<f32>(bits | sx);
}
// np.remainder: fmod (exact), plus b where it is nonzero and its sign is not b's (one rounding); a zero has b's sign
fn tw_remainder(a: f32, b: f32) -> f32 {
    let m = tw_fmod(a, b);
    let mb = bitcast<u32>(m);
    let zero = (mb & 0x7fffffffu) == 0u;
    let r = select(m, m + b, ((mb ^ bitcast<u32>(b)) & 0x80000000u) != 0u);
    return select(r, bitcast<f32>(bitcast<u32>(b) & 0x80000000u), zero);
}
// np.floor_divide: d = (a - fmod(a, b)) / b, less 1 where the fmod's sign is not b's, floored (and rounded up
// where that left more than 1/2: d is within a rounding of an integer); 0 with the sign of a / b where d is 0 or
// a finite a is divided by +-inf; a / b where b is 0 or an infinite a is divided by a finite b (the standard's)
fn tw_floor_divide(a: f32, b: f32) -> f32 {
    let m = tw_fmod(a, b);
    let mb = bitcast<u32>(m);
    let differ = ((mb ^ bitcast<u32>(b)) & 0x80000000u) != 0u && (mb & 0x7fffffffu) != 0u;
    let q = tw_div(a - m, b);
    let d = select(q, q - 1.0, differ);
    let f = floor(d);
    let ea = bitcast<u32>(a) & 0x7fffffffu;
    let eb = bitcast<u32>(b) & 0x7fffffffu;
    let zero = bitcast<f32>((bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u);
    let r = select(select(f, f + 1.0, d - f > 0.5), zero, d == 0.0 || (ea < 0x7f800000u && eb == 0x7f800000u));
    return select(r, tw_div(a, b), eb == 0u || (ea == 0x7f800000u && eb < 0x7f800000u));
}

// ---------------------------------------------------------------- counter-based random numbers (tw.random)

// Threefry-2x32, 20 rounds (Random123's threefry2x32_20, JAX's rotations and key schedule): trueno_web/prng.py
fn tw_tf_rounds(x: vec2<u32>, r: vec4<u32>) -> vec2<u32> {
    var v = x;
    for (var j = 0u; j < 4u; j = j + 1u) {
        v.x = v.x + v.y;
        v.y = ((v.y << r[j]) | (v.y >> (32u - r[j]))) ^ v.x;
    }
    return v;
}
fn tw_threefry(k: vec2<u32>, c: vec2<u32>) -> vec2<u32> {
    let ks = array<u32, 3>(k.x, k.y, k.x ^ k.y ^ 0x1BD11BDAu);
    let ra = vec4<u32>(13u, 15u, 26u, 6u);
    let rb = vec4<u32>(17u, 29u, 16u, 24u);
    var x = c + vec2<u32>(ks[0], ks[1]);
    x = tw_tf_rounds(x, ra) + vec2<u32>(ks[1], ks[2] + 1u);
    x = tw_tf_rounds(x, rb) + vec2<u32>(ks[2], ks[0] + 2u);
    x = tw_tf_rounds(x, ra) + vec2<u32>(ks[0], ks[1] + 3u);
    x = tw_tf_rounds(x, rb) + vec2<u32>(ks[1], ks[2] + 4u);
    x = tw_tf_rounds(x, ra) + vec2<u32>(ks[2], ks[0] + 5u);
    return x;
}
// the two words of element i: the key and counter offset arrive as 16-bit halves in f32 parameters (exact);
// the counter is the 64-bit n = offset + i as (n >> 32, n & 0xFFFFFFFF)
fn tw_random_bits(i: u32, k0h: f32, k0l: f32, k1h: f32, k1l: f32, oh: f32, ol: f32) -> vec2<u32> {
    let key = vec2<u32>((u32(k0h) << 16u) | u32(k0l), (u32(k1h) << 16u) | u32(k1l));
    let off = (u32(oh) << 16u) | u32(ol);
    let lo = off + i;
    return tw_threefry(key, vec2<u32>(select(0u, 1u, lo < off), lo));
}
fn tw_unit(bits: u32) -> f32 { return bitcast<f32>((bits >> 9u) | 0x3f800000u) - 1.0; }  // [0, 1), exact
fn tw_random_uniform(i: u32, k0h: f32, k0l: f32, k1h: f32, k1l: f32, oh: f32, ol: f32, lo: f32, hi: f32) -> f32 {
    let b = tw_random_bits(i, k0h, k0l, k1h, k1l, oh, ol);
    return max(lo, tw_unit(b.x ^ b.y) * (hi - lo) + lo);
}
// Box-Muller: radius from the first word (u1 in (0, 1]), angle from the second; the library's own log and cos
fn tw_random_normal(i: u32, k0h: f32, k0l: f32, k1h: f32, k1l: f32, oh: f32, ol: f32) -> f32 {
    let b = tw_random_bits(i, k0h, k0l, k1h, k1l, oh, ol);
    let r = sqrt(-2.0 * tw_log(1.0 - tw_unit(b.x)));
    return r * tw_cos(6.2831854820251465 * tw_unit(b.y));
}
fn tw_random_bernoulli(i: u32, k0h: f32, k0l: f32, k1h: f32, k1l: f32, oh: f32, ol: f32, p: f32) -> f32 {
    let b = tw_random_bits(i, k0h, k0l, k1h, k1l, oh, ol);
    return select(0.0, 1.0, tw_unit(b.x ^ b.y) < p);
}
// the `index` generator: the element's flat index as int32 (the iota of arange, linspace, eye, tril, triu)
fn tw_index_i32(i: u32) -> i32 { return bitcast<i32>(i); }
