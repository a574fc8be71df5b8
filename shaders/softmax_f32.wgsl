// softmax.wgsl's per-element functions for rows read as scalars.
fn tw_push(st: vec3<f32>, v: f32) -> vec3<f32> {
    let m = tw_max(st.x, v);
    return vec3<f32>(m, tw_lane_add(tw_rescale(st, m), tw_term(v, m)));
}

fn tw_out(v: f32, st: vec2<f32>, log_s: f32, is_log: bool) -> f32 {
    return tw_out1(v, st, log_s, is_log);
}

// softmax_regs.wgsl's: an element's max, its term at max m, a pair plus its term
fn tw_vmax(v: f32) -> f32 { return v; }
fn tw_terms(v: f32, m: f32) -> f32 { return tw_term(v, m); }
fn tw_vsum(s: vec2<f32>, e: f32) -> vec2<f32> { return tw_lane_add(s, e); }
