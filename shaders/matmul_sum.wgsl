// The second pass of a matmul split over K (shaders/matmul.wgsl): C = the sum of its S partial products,
// stored one after another in `parts`, each as long as C. T is a vec4 of its scalar where C's rows are whole vec4s.
// tw_meta: [0] elements of C (in T), [1] S, then from [8] an epilogue's words. OUT declares C (binding 2), or the
// epilogue that STORE calls (kernels/matmul.py `epilogue`: the chain that reads the product, bindings 2 on).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> parts: array<{{T}}>;
{{OUT}}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let count = tw_meta[0];
    let i = (wid.y * nwg.x + wid.x) * 256u + lid;
    if (i >= count) { return; }
    var s = parts[i];
    for (var p = 1u; p < tw_meta[1]; p = p + 1u) {
        s = s + parts[p * count + i];
    }
    {{STORE}}
}
