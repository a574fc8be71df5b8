// scatter_add: out = x with values[k] added at the element take's index rule gives for k
// (kernels/scatter.py). Entry `copy` writes x into out (one thread per element), entry `add` one value
// per thread: an atomicAdd on i32/u32 words; on float32 a compare-exchange loop on the word's bits (WGSL
// has no float atomics), so duplicates all add, in any order.
// tw_meta: [0] = elements (copy) or values (add), [1] outer, [2] n, [3] inner (gathers.axis_geometry).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read> indices: array<{{INDEX}}>;
@group(0) @binding(3) var<storage, read> values: array<{{VALUE}}>;
@group(0) @binding(4) var<storage, read_write> out: array<atomic<{{WORD}}>>;

fn tw_thread(wid: vec3<u32>, nwg: vec3<u32>, lid: u32) -> u32 {
    return (wid.y * nwg.x + wid.x) * 256u + lid;
}

fn tw_position(k: u32, v: {{INDEX}}) -> u32 {
    let outer = tw_meta[1];
    let n = tw_meta[2];
    let inner = tw_meta[3];
    var j = {{SIGNED}};
    if (j < 0) { j = j + i32(n); }
    j = clamp(j, 0, max(i32(n) - 1, 0));
    return (k / outer) * n * inner + u32(j) * inner + k % inner;
}

@compute @workgroup_size(256)
fn copy(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = tw_thread(wid, nwg, lid);
    if (i < tw_meta[0]) { atomicStore(&out[i], {{WORD}}(x[i])); }
}

@compute @workgroup_size(256)
fn add(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) lid: u32) {
    let k = tw_thread(wid, nwg, lid);
    if (k >= tw_meta[0]) { return; }
    let at = tw_position(k, indices[k]);
{{ADD}}
}
