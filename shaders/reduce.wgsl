// Reduction template, fully on the GPU in one submit: `partial` folds a grid-stride slice per
// workgroup into partials[group]; `finish` folds the partials in one workgroup into out[0].
// kernels.py fills in LOAD (a WGSL expression of x = a[i] and y = b[i]), IDENTITY (of a lane) and FINISH
// from the op catalog, the accumulators (source.accumulator: a thread's type LANES, its START, ADD4 of a
// vec4 v to acc, DONE to ACC, the type folded across threads, with LIFT from f32, COMBINE, VALUE to f32;
// sums keep a compensated (sum, error) pair per vec4 lane, then fold as pairs), and FOLD (the workgroup
// fold: subgroup shuffles where the adapter has them, else a tree in workgroup memory).
// The inputs are read as vec4 (bindings cover the buffers rounded up to 16 bytes), four vec4s per
// thread per round (eight for one input) for enough loads in flight; lanes past the element count fold the identity.
// tw_meta: [0] = element count, [1] = number of partials, [2] = vec4 count, [7] = 1.0 (tw_one).

{{ENABLE}}
@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
{{B_DECL}}
@group(0) @binding(3) var<storage, read_write> partials: array<{{ACC}}>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

var<workgroup> tw_shared: array<{{ACC}}, 256>;

fn tw_load(x: f32, y: f32) -> f32 {
    return {{LOAD}};
}

// vec4 i of the inputs as loaded; lanes at or past n hold the identity
fn tw_load4(i: u32, n: u32) -> vec4<f32> {
    let x = a[i];
    let y = {{Y}};
    let v = vec4<f32>(tw_load(x.x, y.x), tw_load(x.y, y.y), tw_load(x.z, y.z), tw_load(x.w, y.w));
    if (4u * i + 4u <= n) { return v; }
    let e = 4u * i;
    let id = {{IDENTITY}};
    return vec4<f32>(select(id, v.x, e < n), select(id, v.y, e + 1u < n), select(id, v.z, e + 2u < n), id);
}

// a thread's accumulator after one more vec4
fn tw_add4(acc: {{LANES}}, v: vec4<f32>) -> {{LANES}} {
    return {{ADD4}};
}

{{FOLD}}

@compute @workgroup_size(256)
fn partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32{{SG_ARGS}}) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let n = tw_meta[0];
    let nv = tw_meta[2];
    let stride = nwg.x * 256u;
    var i = wid.x * 256u + lid;
    // UNROLL independent loads in flight per thread, into ACCS accumulators
{{ACC_DECL}}
    for (; i + {{UNROLL_M1}}u * stride < nv; i = i + {{UNROLL}}u * stride) {
{{UNROLLED}}
    }
    for (; i < nv; i = i + stride) {
        acc0 = tw_add4(acc0, tw_load4(i, n));
    }
    let total = tw_fold(lid, {{ACC_FOLD}}{{SG_PASS}});
    if (lid == 0u) { partials[wid.x] = total; }
}

@compute @workgroup_size(256)
fn finish(@builtin(local_invocation_index) lid: u32{{SG_ARGS}}) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let parts = tw_meta[1];
    var acc: {{ACC}} = {{LIFT}}({{IDENTITY}});
    for (var i = lid; i < parts; i = i + 256u) {
        acc = {{COMBINE}}(acc, partials[i]);
    }
    let total = tw_fold(lid, acc{{SG_PASS}});
    if (lid == 0u) { out[0] = {{FINISH}}({{VALUE}}(total)); }
}
