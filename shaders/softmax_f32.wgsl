// softmax.wgsl's per-element functions for rows read as scalars.
fn tw_push(st: vec3<f32>, v: f32) -> vec3<f32> {
    let m = tw_max(st.x, v);
    return vec3<f32>(m, tw_lane_add(tw_rescale(st, m), tw_term(v, m)));
}

fn tw_out(v: f32, st: vec2<f32>, log_s: f32, is_log: bool) -> f32 {
    return tw_out1(v, st, log_s, is_log);
}
