// softmax.wgsl's per-element functions for rows read as vec4 (cols % 4 == 0).
fn tw_push(st: vec3<f32>, v: vec4<f32>) -> vec3<f32> {
    let m = tw_max(st.x, tw_max(tw_max(v.x, v.y), tw_max(v.z, v.w)));
    let s = tw_lane_add(tw_lane_add(tw_rescale(st, m), tw_term(v.x, m)), tw_term(v.y, m));
    return vec3<f32>(m, tw_lane_add(tw_lane_add(s, tw_term(v.z, m)), tw_term(v.w, m)));
}

fn tw_out(v: vec4<f32>, st: vec2<f32>, log_s: f32, is_log: bool) -> vec4<f32> {
    return vec4<f32>(tw_out1(v.x, st, log_s, is_log), tw_out1(v.y, st, log_s, is_log),
                     tw_out1(v.z, st, log_s, is_log), tw_out1(v.w, st, log_s, is_log));
}

// softmax_regs.wgsl's: a vector's max, its terms at max m, a pair plus its terms
fn tw_vmax(v: vec4<f32>) -> f32 { return tw_max(tw_max(v.x, v.y), tw_max(v.z, v.w)); }
fn tw_terms(v: vec4<f32>, m: f32) -> vec4<f32> {
    return vec4<f32>(tw_term(v.x, m), tw_term(v.y, m), tw_term(v.z, m), tw_term(v.w, m));
}
fn tw_vsum(s: vec2<f32>, e: vec4<f32>) -> vec2<f32> {
    return tw_lane_add(tw_lane_add(tw_lane_add(tw_lane_add(s, e.x), e.y), e.z), e.w);
}
