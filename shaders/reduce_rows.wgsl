// Reduction along rows: out[r] = FINISH(the fold of LOAD(x, y) over the `cols` elements of row r), for
// a flat input seen as contiguous rows (the tensor layer's axis reductions). kernels/reduce.py fills in
// LOAD, COMBINE, IDENTITY, FINISH from the op catalog, as for the full reduction in reduce.wgsl.
// TPR threads per row (a power of two up to 256), 256 / TPR rows per workgroup, on a grid that may be
// 2-D past 65535 workgroups.
// tw_meta: [0] rows, [1] cols, [2] threads per row.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<f32>;
{{B_DECL}}
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

var<workgroup> tw_shared: array<f32, 256>;

fn tw_load(x: f32, y: f32) -> f32 {
    return {{LOAD}};
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let rows = tw_meta[0];
    let cols = tw_meta[1];
    let tpr = tw_meta[2];
    let lane = lid & (tpr - 1u);
    let row = (wid.y * nwg.x + wid.x) * (256u / tpr) + lid / tpr;
    var acc: f32 = {{IDENTITY}};
    if (row < rows) {  // rows past the end still reach every barrier
        for (var j = lane; j < cols; j = j + tpr) {
            let i = row * cols + j;
            acc = {{COMBINE}}(acc, tw_load(a[i], {{Y}}));
        }
    }
    tw_shared[lid] = acc;
    workgroupBarrier();
    for (var stride = tpr >> 1u; stride > 0u; stride = stride >> 1u) {
        if (lane < stride) { tw_shared[lid] = {{COMBINE}}(tw_shared[lid], tw_shared[lid + stride]); }
        workgroupBarrier();
    }
    if (lane == 0u && row < rows) { out[row] = {{FINISH}}(tw_shared[lid]); }
}
