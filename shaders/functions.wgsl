// trueno_web: the per-op WGSL functions. One function per catalog row (trueno_web/ops.py).
// Single kernels and fused kernels call the same functions, so both compute the same numbers.
// NaN is tested on the bits (never with x != x, which a compiler may fold away), and
// comparisons are arranged so that NaN falls through to the NaN-propagating branch.

const TW_F32_MAX: f32 = 3.4028234663852886e38;
const TW_GELU_C: f32 = 0.7978845608028654;
const TW_SELU_ALPHA: f32 = 1.6732632423543772;
const TW_SELU_SCALE: f32 = 1.0507009873554805;

// Infinities and NaN come from a private variable's bits: WGSL compilers (Tint) refuse NaN and Inf
// in constant expressions, and a private variable is not one.
var<private> TW_INF_BITS: u32 = 0x7f800000u;
fn tw_inf() -> f32 { return bitcast<f32>(TW_INF_BITS); }
fn tw_neg_inf() -> f32 { return bitcast<f32>(TW_INF_BITS | 0x80000000u); }
fn tw_nan() -> f32 { return bitcast<f32>(TW_INF_BITS | 0x00400000u); }

fn tw_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
// -inf -> -FLT_MAX, so that x * 0 is -0.0 (the limit) instead of NaN
fn tw_floor_finite(x: f32) -> f32 { return select(x, -TW_F32_MAX, x < -TW_F32_MAX); }
// exp and log that keep NaN (SwiftShader's exp of NaN is inf, its log -inf); the shader set uses only these
fn tw_exp(x: f32) -> f32 { return select(exp(x), x, tw_isnan(x)); }
fn tw_log(x: f32) -> f32 { return select(log(x), x, tw_isnan(x)); }
// tanh saturates to +-1 in f32 beyond |x| = 9.1; avoid inf/inf inside some implementations
fn tw_safe_tanh(x: f32) -> f32 { return select(tanh(x), sign(x), abs(x) > 10.0); }

fn tw_relu(x: f32) -> f32 { return select(0.0, x, x > 0.0 || tw_isnan(x)); }
fn tw_leaky_relu(x: f32, slope: f32) -> f32 { return select(slope * x, x, x > 0.0); }
fn tw_elu(x: f32, alpha: f32) -> f32 { return select(alpha * (tw_exp(x) - 1.0), x, x > 0.0); }
fn tw_sigmoid(x: f32) -> f32 { return 1.0 / (1.0 + tw_exp(-x)); }
fn tw_tanh(x: f32) -> f32 { return tw_safe_tanh(x); }
fn tw_swish(x: f32) -> f32 { return tw_floor_finite(x) * tw_sigmoid(x); }
fn tw_gelu(x: f32) -> f32 {
    let v = tw_floor_finite(x);
    return 0.5 * v * (1.0 + tw_safe_tanh(TW_GELU_C * (v + 0.044715 * v * v * v)));
}
fn tw_softplus(x: f32) -> f32 { return select(0.0, x, x > 0.0) + tw_log(1.0 + tw_exp(-abs(x))); }
fn tw_mish(x: f32) -> f32 { return tw_floor_finite(x) * tw_safe_tanh(tw_softplus(x)); }
fn tw_selu(x: f32) -> f32 { return TW_SELU_SCALE * select(TW_SELU_ALPHA * (tw_exp(x) - 1.0), x, x > 0.0); }
fn tw_hardswish(x: f32) -> f32 {
    let v = tw_floor_finite(x);
    let r = v + 3.0;
    return v * select(select(r, 0.0, r < 0.0), 6.0, r > 6.0) / 6.0;
}
fn tw_clip(x: f32, lo: f32, hi: f32) -> f32 {
    let low = select(x, lo, x < lo);
    let r = select(low, hi, low > hi);
    return select(r, tw_nan(), tw_isnan(lo) || tw_isnan(hi));  // a NaN bound gives NaN, as in NumPy
}
fn tw_scale(x: f32, s: f32) -> f32 { return x * s; }
fn tw_add(a: f32, b: f32) -> f32 { return a + b; }
fn tw_sub(a: f32, b: f32) -> f32 { return a - b; }
fn tw_mul(a: f32, b: f32) -> f32 { return a * b; }
// NaN-propagating max/min (NumPy's np.max/np.min semantics)
fn tw_max(a: f32, b: f32) -> f32 {
    if (tw_isnan(a)) { return a; }
    if (tw_isnan(b)) { return b; }
    return select(b, a, a > b);
}
fn tw_min(a: f32, b: f32) -> f32 {
    if (tw_isnan(a)) { return a; }
    if (tw_isnan(b)) { return b; }
    return select(b, a, a < b);
}
