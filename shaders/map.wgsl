// Elementwise map kernel template: one fused chain of catalog functions per element.
// kernels.py fills in the BINDINGS (inputs read-only, outputs read-write), the BODY (the chain, on
// element or vec4 `i`) and VPT. Vectorised form: each binding is an array<vec4<f32>> over the buffer
// rounded up to 16 bytes (the pool's buffers always are), the chain runs per component with the same
// scalar functions, and each thread handles VPT vec4s, 256 apart, so a warp's loads stay coalesced.
// Lanes past the element count read and write the buffers' padding only.
// tw_meta: [0] = count (vec4s in the vectorised form, else elements), [8..] = scalar parameters as
// f32 bits (data, never WGSL text).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
{{BINDINGS}}

fn tw_param(i: u32) -> f32 { return bitcast<f32>(tw_meta[8u + i]); }

fn tw_chain(i: u32) {
{{BODY}}
}

const VPT: u32 = {{VPT}}u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let count = tw_meta[0];
    let base = (wid.y * nwg.x + wid.x) * (256u * VPT) + lid;
{{LOOP}}
}
