// ---------------------------------------------------------------- float16 storage (trueno_web/dtypes.py)
// A float16 element is 16 bits of a u32 word (element e: word e / 2, the low half for even e), computed in
// f32. Both conversions are written on the bits (WGSL's pack2x16float leaves rounding and out-of-range
// values to the implementation): f32 to f16 rounds to nearest even, past 65520 to Inf, below 2^-25 to zero,
// subnormals exact; a NaN keeps its sign and top payload bits (never becoming Inf), as NumPy's astype.
fn tw_f16_bits(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    let sign = (b >> 16u) & 0x8000u;
    let a = b & 0x7fffffffu;
    if (a > 0x7f800000u) {
        let nan = 0x7c00u | ((a & 0x7fffffu) >> 13u);
        return sign | select(nan, 0x7c01u, nan == 0x7c00u);
    }
    if (a >= 0x477ff000u) { return sign | 0x7c00u; }
    if (a >= 0x38800000u) {
        let m = a - 0x38000000u;
        return sign | ((m + 0xfffu + ((m >> 13u) & 1u)) >> 13u);
    }
    if (a <= 0x33000000u) { return sign; }
    let mant = (a & 0x7fffffu) | 0x800000u;
    let shift = 126u - (a >> 23u);
    return sign | ((mant + (1u << (shift - 1u)) - 1u + ((mant >> shift) & 1u)) >> shift);
}
fn tw_f16_value(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = (h >> 10u) & 0x1fu;
    let m = h & 0x3ffu;
    if (e == 0x1fu) { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }
    if (e == 0u) { return bitcast<f32>(sign | bitcast<u32>(f32(m) * 5.9604644775390625e-8)); }
    return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}
fn tw_f16_at(word: u32, e: u32) -> f32 { return tw_f16_value((word >> ((e & 1u) * 16u)) & 0xffffu); }
fn tw_f16_vec4(w: vec2<u32>) -> vec4<f32> {
    return vec4<f32>(tw_f16_value(w.x & 0xffffu), tw_f16_value(w.x >> 16u),
                     tw_f16_value(w.y & 0xffffu), tw_f16_value(w.y >> 16u));
}
fn tw_f16_pack4(v: vec4<f32>) -> vec2<u32> {
    return vec2<u32>(tw_f16_bits(v.x) | (tw_f16_bits(v.y) << 16u), tw_f16_bits(v.z) | (tw_f16_bits(v.w) << 16u));
}
fn tw_round_f16(x: f32) -> f32 { return tw_f16_value(tw_f16_bits(x)); }
fn tw_copy_f16(x: f32) -> f32 { return x; }
// astype from float16: a loaded float16 is already its f32 value; to float16: the f32 conversion, rounded
fn tw_astype_f16_f16(x: f32) -> f32 { return x; }
fn tw_astype_f16_f32(x: f32) -> f32 { return x; }
fn tw_astype_f16_i32(x: f32) -> i32 { return tw_astype_f32_i32(x); }
fn tw_astype_f16_u32(x: f32) -> u32 { return tw_astype_f32_u32(x); }
fn tw_astype_f16_bool(x: f32) -> u32 { return tw_astype_f32_bool(x); }
fn tw_astype_f32_f16(x: f32) -> f32 { return tw_round_f16(x); }
fn tw_astype_i32_f16(x: i32) -> f32 { return tw_round_f16(f32(x)); }
fn tw_astype_u32_f16(x: u32) -> f32 { return tw_round_f16(f32(x)); }
fn tw_astype_bool_f16(x: u32) -> f32 { return f32(x); }
