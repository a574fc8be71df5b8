// The sort order as unsigned keys (trueno_web/sort_kinds.py): a stored 32-bit word of key kind `kind`
// (0: bool and uint32 as they are, 1: int32 with its sign bit flipped, 2: float32 with -0.0 as 0.0 and
// every NaN the largest key) to a key whose unsigned order is the values' order; `desc`: its complement.
fn tw_key(bits: u32, kind: u32, desc: bool) -> u32 {
    var k = bits;
    if (kind == 1u) {
        k = bits ^ 0x80000000u;
    } else if (kind == 2u) {
        let mag = bits & 0x7fffffffu;
        if (mag > 0x7f800000u) {
            k = 0xffffffffu;
        } else if (mag == 0u) {
            k = 0x80000000u;
        } else if (bits >= 0x80000000u) {
            k = ~bits;
        } else {
            k = bits | 0x80000000u;
        }
    }
    return select(k, ~k, desc);
}
