// Elementwise map kernel template: one fused chain of catalog functions per thread element.
// kernels.py fills in the BINDINGS (inputs read-only, outputs read-write) and the BODY (the chain).
// tw_meta: [0] = element count, [8..] = scalar parameters as f32 bits (data, never WGSL text).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
{{BINDINGS}}

fn tw_param(i: u32) -> f32 { return bitcast<f32>(tw_meta[8u + i]); }

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = (wid.y * nwg.x + wid.x) * 256u + lid;
    if (i >= tw_meta[0]) { return; }
{{BODY}}
}
