// Softmax / log-softmax along the last axis, one workgroup per row, one dispatch, no CPU round trip:
// a NaN-propagating max, then sum(exp(x - max)), then the write. tw_meta: [0] rows, [1] cols, [2] log?

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;

var<workgroup> tw_shared: array<f32, 256>;

fn tw_fold_max(lid: u32, value: f32) -> f32 {
    workgroupBarrier();
    tw_shared[lid] = value;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
        if (lid < stride) { tw_shared[lid] = tw_max(tw_shared[lid], tw_shared[lid + stride]); }
        workgroupBarrier();
    }
    return tw_shared[0];
}

fn tw_fold_sum(lid: u32, value: f32) -> f32 {
    workgroupBarrier();
    tw_shared[lid] = value;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
        if (lid < stride) { tw_shared[lid] = tw_shared[lid] + tw_shared[lid + stride]; }
        workgroupBarrier();
    }
    return tw_shared[0];
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let row = wid.y * nwg.x + wid.x;
    let rows = tw_meta[0];
    let cols = tw_meta[1];
    if (row >= rows) { return; }  // uniform per workgroup, so the barriers below stay uniform
    let base = row * cols;
    var m: f32 = bitcast<f32>(0xff800000u);
    for (var j = lid; j < cols; j = j + 256u) { m = tw_max(m, x[base + j]); }
    m = tw_fold_max(lid, m);
    var s: f32 = 0.0;
    for (var j = lid; j < cols; j = j + 256u) { s = s + exp(x[base + j] - m); }
    s = tw_fold_sum(lid, s);
    let log_s = log(s);
    for (var j = lid; j < cols; j = j + 256u) {
        let shifted = x[base + j] - m;
        y[base + j] = select(exp(shifted) / s, shifted - log_s, tw_meta[2] == 1u);
    }
}
