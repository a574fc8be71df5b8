// Reduction template, fully on the GPU in one submit: `partial` folds a grid-stride slice per
// workgroup into partials[group]; `finish` folds the partials in one workgroup into out[0].
// kernels.py fills in LOAD (a WGSL expression of x = a[i] and y = b[i]), COMBINE, IDENTITY
// and FINISH from the op catalog. tw_meta: [0] = element count, [1] = number of partials.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> partials: array<f32>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

var<workgroup> tw_shared: array<f32, 256>;

fn tw_load(i: u32) -> f32 {
    let x = a[i];
    let y = b[i];  // unary reductions bind a here too
    return {{LOAD}};
}

fn tw_fold_shared(lid: u32, value: f32) -> f32 {
    tw_shared[lid] = value;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
        if (lid < stride) {
            tw_shared[lid] = {{COMBINE}}(tw_shared[lid], tw_shared[lid + stride]);
        }
        workgroupBarrier();
    }
    return tw_shared[0];
}

@compute @workgroup_size(256)
fn partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let n = tw_meta[0];
    var acc: f32 = {{IDENTITY}};
    for (var i = wid.x * 256u + lid; i < n; i = i + nwg.x * 256u) {
        acc = {{COMBINE}}(acc, tw_load(i));
    }
    let total = tw_fold_shared(lid, acc);
    if (lid == 0u) { partials[wid.x] = total; }
}

@compute @workgroup_size(256)
fn finish(@builtin(local_invocation_index) lid: u32) {
    let parts = tw_meta[1];
    var acc: f32 = {{IDENTITY}};
    for (var i = lid; i < parts; i = i + 256u) {
        acc = {{COMBINE}}(acc, partials[i]);
    }
    let total = tw_fold_shared(lid, acc);
    if (lid == 0u) { out[0] = {{FINISH}}(total); }
}
