// trueno_web: the integer and bool kernels' functions (int32: _i32, uint32: _u32, bool: _bool, a u32 word of 0
// or 1), one per catalog row and dtype it computes in (ops.Op.dtypes; the name: ops.Op.function). Integer
// arithmetic wraps (two's complement, as NumPy's int32 and uint32); comparisons give bool.

// ---------------------------------------------------------------- i32
fn tw_add_i32(a: i32, b: i32) -> i32 { return a + b; }
fn tw_sub_i32(a: i32, b: i32) -> i32 { return a - b; }
fn tw_mul_i32(a: i32, b: i32) -> i32 { return a * b; }
fn tw_neg_i32(x: i32) -> i32 { return -x; }
fn tw_abs_i32(x: i32) -> i32 { return abs(x); }
fn tw_square_i32(x: i32) -> i32 { return x * x; }
fn tw_max_i32(a: i32, b: i32) -> i32 { return max(a, b); }
fn tw_min_i32(a: i32, b: i32) -> i32 { return min(a, b); }
fn tw_copy_i32(x: i32) -> i32 { return x; }
fn tw_lt_i32(a: i32, b: i32) -> u32 { return select(0u, 1u, a < b); }
fn tw_le_i32(a: i32, b: i32) -> u32 { return select(0u, 1u, a <= b); }
fn tw_gt_i32(a: i32, b: i32) -> u32 { return select(0u, 1u, a > b); }
fn tw_ge_i32(a: i32, b: i32) -> u32 { return select(0u, 1u, a >= b); }
fn tw_eq_i32(a: i32, b: i32) -> u32 { return select(0u, 1u, a == b); }
fn tw_ne_i32(a: i32, b: i32) -> u32 { return select(0u, 1u, a != b); }
fn tw_where_i32(c: u32, a: i32, b: i32) -> i32 { return select(b, a, c != 0u); }
fn tw_bitwise_and_i32(a: i32, b: i32) -> i32 { return a & b; }
fn tw_bitwise_or_i32(a: i32, b: i32) -> i32 { return a | b; }
fn tw_bitwise_xor_i32(a: i32, b: i32) -> i32 { return a ^ b; }
fn tw_bitwise_invert_i32(x: i32) -> i32 { return ~x; }
// a shift by 32 or more (or a negative one) shifts every bit out; WGSL itself would take it modulo 32
fn tw_bitwise_left_shift_i32(a: i32, b: i32) -> i32 { return select(0, a << u32(b), u32(b) < 32u); }
fn tw_bitwise_right_shift_i32(a: i32, b: i32) -> i32 { return a >> min(u32(b), 31u); }
// ---------------------------------------------------------------- u32
fn tw_add_u32(a: u32, b: u32) -> u32 { return a + b; }
fn tw_sub_u32(a: u32, b: u32) -> u32 { return a - b; }
fn tw_mul_u32(a: u32, b: u32) -> u32 { return a * b; }
fn tw_neg_u32(x: u32) -> u32 { return 0u - x; }
fn tw_abs_u32(x: u32) -> u32 { return x; }
fn tw_square_u32(x: u32) -> u32 { return x * x; }
fn tw_max_u32(a: u32, b: u32) -> u32 { return max(a, b); }
fn tw_min_u32(a: u32, b: u32) -> u32 { return min(a, b); }
fn tw_copy_u32(x: u32) -> u32 { return x; }
fn tw_lt_u32(a: u32, b: u32) -> u32 { return select(0u, 1u, a < b); }
fn tw_le_u32(a: u32, b: u32) -> u32 { return select(0u, 1u, a <= b); }
fn tw_gt_u32(a: u32, b: u32) -> u32 { return select(0u, 1u, a > b); }
fn tw_ge_u32(a: u32, b: u32) -> u32 { return select(0u, 1u, a >= b); }
fn tw_eq_u32(a: u32, b: u32) -> u32 { return select(0u, 1u, a == b); }
fn tw_ne_u32(a: u32, b: u32) -> u32 { return select(0u, 1u, a != b); }
fn tw_where_u32(c: u32, a: u32, b: u32) -> u32 { return select(b, a, c != 0u); }
fn tw_bitwise_and_u32(a: u32, b: u32) -> u32 { return a & b; }
fn tw_bitwise_or_u32(a: u32, b: u32) -> u32 { return a | b; }
fn tw_bitwise_xor_u32(a: u32, b: u32) -> u32 { return a ^ b; }
fn tw_bitwise_invert_u32(x: u32) -> u32 { return ~x; }
// a shift by 32 or more (or a negative one) shifts every bit out; WGSL itself would take it modulo 32
fn tw_bitwise_left_shift_u32(a: u32, b: u32) -> u32 { return select(0u, a << u32(b), u32(b) < 32u); }
fn tw_bitwise_right_shift_u32(a: u32, b: u32) -> u32 { return select(0u, a >> b, b < 32u); }
// ---------------------------------------------------------------- rounding, sign and Python's // and % on integers
// rounding an integer is itself; a division by 0 gives 0 (as NumPy); the int32 minimum // -1 wraps to itself
fn tw_floor_i32(x: i32) -> i32 { return x; }
fn tw_round_i32(x: i32) -> i32 { return x; }
fn tw_ceil_i32(x: i32) -> i32 { return x; }
fn tw_trunc_i32(x: i32) -> i32 { return x; }
fn tw_positive_i32(x: i32) -> i32 { return x; }
fn tw_imag_i32(x: i32) -> i32 { return 0; }
fn tw_sign_i32(x: i32) -> i32 { return select(0, 1, x > 0) - select(0, 1, x < 0); }
fn tw_floor_u32(x: u32) -> u32 { return x; }
fn tw_round_u32(x: u32) -> u32 { return x; }
fn tw_ceil_u32(x: u32) -> u32 { return x; }
fn tw_trunc_u32(x: u32) -> u32 { return x; }
fn tw_positive_u32(x: u32) -> u32 { return x; }
fn tw_imag_u32(x: u32) -> u32 { return 0u; }
fn tw_sign_u32(x: u32) -> u32 { return select(0u, 1u, x != 0u); }
// WGSL's / and % truncate, and give a (and 0) for b = 0 and for the minimum over -1: moved to floor's signs here
fn tw_floor_divide_i32(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let q = a / b;
    return select(q, q - 1, (a % b != 0) && ((a < 0) != (b < 0)));
}
fn tw_remainder_i32(a: i32, b: i32) -> i32 {
    if (b == 0) { return 0; }
    let r = a % b;
    return select(r, r + b, (r != 0) && ((r < 0) != (b < 0)));
}
fn tw_floor_divide_u32(a: u32, b: u32) -> u32 { return select(a / max(b, 1u), 0u, b == 0u); }
fn tw_remainder_u32(a: u32, b: u32) -> u32 { return select(a % max(b, 1u), 0u, b == 0u); }
// integer pow: squaring and multiplying, wrapping (WGSL's integer arithmetic); a negative exponent gives
// 1 / a^-b toward zero (1 for a = 1, +-1 for a = -1, else 0)
fn tw_pow_u32(a: u32, b: u32) -> u32 {
    var r = 1u;
    var base = a;
    var e = b;
    for (var k = 0u; k < 32u && e != 0u; k = k + 1u) {
        if ((e & 1u) != 0u) { r = r * base; }
        base = base * base;
        e = e >> 1u;
    }
    return r;
}
fn tw_pow_i32(a: i32, b: i32) -> i32 {
    if (b < 0) { return select(select(0, select(1, -1, (b & 1) != 0), a == -1), 1, a == 1); }
    return bitcast<i32>(tw_pow_u32(bitcast<u32>(a), bitcast<u32>(b)));
}
// ---------------------------------------------------------------- bool
fn tw_eq_bool(a: u32, b: u32) -> u32 { return select(0u, 1u, a == b); }
fn tw_ne_bool(a: u32, b: u32) -> u32 { return select(0u, 1u, a != b); }
fn tw_where_bool(c: u32, a: u32, b: u32) -> u32 { return select(b, a, c != 0u); }
fn tw_copy_bool(x: u32) -> u32 { return x; }
fn tw_logical_and_bool(a: u32, b: u32) -> u32 { return a & b; }
fn tw_logical_or_bool(a: u32, b: u32) -> u32 { return a | b; }
fn tw_logical_xor_bool(a: u32, b: u32) -> u32 { return a ^ b; }
fn tw_logical_not_bool(x: u32) -> u32 { return x ^ 1u; }
fn tw_bitwise_and_bool(a: u32, b: u32) -> u32 { return a & b; }
fn tw_bitwise_or_bool(a: u32, b: u32) -> u32 { return a | b; }
fn tw_bitwise_xor_bool(a: u32, b: u32) -> u32 { return a ^ b; }
fn tw_bitwise_invert_bool(x: u32) -> u32 { return x ^ 1u; }
// ---------------------------------------------------------------- astype: tw_astype_<from>_<to>
// float to integer: toward zero, saturating at the range, NaN to 0 (explicit: WGSL leaves NaN undefined);
// to bool: nonzero (on the bits: a subnormal is nonzero, NaN too)
fn tw_astype_f32_i32(x: f32) -> i32 {
    if (tw_isnan(x)) { return 0; }
    if (x >= 2147483648.0) { return 2147483647; }
    return i32(max(x, -2147483648.0));
}
fn tw_astype_f32_u32(x: f32) -> u32 {
    if (x >= 4294967296.0) { return 4294967295u; }
    return select(0u, u32(x), x > 0.0);
}
fn tw_astype_f32_bool(x: f32) -> u32 { return select(0u, 1u, (bitcast<u32>(x) & 0x7fffffffu) != 0u); }
fn tw_astype_i32_f32(x: i32) -> f32 { return f32(x); }
fn tw_astype_i32_u32(x: i32) -> u32 { return bitcast<u32>(x); }
fn tw_astype_i32_bool(x: i32) -> u32 { return select(0u, 1u, x != 0); }
fn tw_astype_u32_f32(x: u32) -> f32 { return f32(x); }
fn tw_astype_u32_i32(x: u32) -> i32 { return bitcast<i32>(x); }
fn tw_astype_u32_bool(x: u32) -> u32 { return select(0u, 1u, x != 0u); }
fn tw_astype_bool_f32(x: u32) -> f32 { return f32(x); }
fn tw_astype_bool_i32(x: u32) -> i32 { return i32(x); }
fn tw_astype_bool_u32(x: u32) -> u32 { return x; }
fn tw_astype_f32_f32(x: f32) -> f32 { return x; }
fn tw_astype_i32_i32(x: i32) -> i32 { return x; }
fn tw_astype_u32_u32(x: u32) -> u32 { return x; }
fn tw_astype_bool_bool(x: u32) -> u32 { return x; }
// ---------------------------------------------------------------- reductions of bool (max: any, min: all)
fn tw_max_bool(a: u32, b: u32) -> u32 { return a | b; }
fn tw_min_bool(a: u32, b: u32) -> u32 { return a & b; }
