// Reduction template, fully on the GPU in one submit: `partial` folds a grid-stride slice per
// workgroup into partials[group]; `finish` folds the partials in one workgroup into out[0].
// kernels/reduce.py fills in the BINDINGS of the loads (plain ones array<vec4<f32>>, strided views array<f32>
// with their index functions), the CHAIN (the elementwise ops fused into the reduction: one element's
// values from its loads' values l0, l1, ..., then x and y, the reduction's operands), LOADS (vec4 i of each
// load, a0, a1, ...) and LANES4 (tw_value of each lane); from the op catalog (source.fold: an integer dtype's
// own) LOAD (a WGSL expression of x and y), IDENTITY (of a lane), FINISH and T (the WGSL scalar it computes
// in); the accumulators (source.accumulator: a thread's type LANES, one lane per vec4 component, its START,
// ADD4 of a vec4 v to acc, DONE (statements) to ACC, the type folded across threads, with LIFT from T,
// COMBINE, VALUE to T; float sums keep a compensated (sum, error) pair per lane, then fold as pairs,
// integers fold exactly), and FOLD (the workgroup fold: subgroup shuffles where the adapter has them,
// else a tree in workgroup memory).
// Plain loads are read as vec4 (bindings cover the buffers rounded up to 16 bytes), UNROLLED: a loop over
// `unroll` vec4s per thread per round for enough loads in flight (none where unroll is 1), folded into
// ACC_DECL's accumulators; lanes past the element count fold the identity (a strided load reads the last
// element for them).
// tw_meta: [0] = element count, [1] = number of partials, [2] = vec4 count, [7] = 1.0 (tw_one), [8..] the
// chain's scalar parameters as f32 bits, then the views of the strided loads.

{{ENABLE}}
@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read_write> partials: array<{{ACC}}>;
@group(0) @binding(2) var<storage, read_write> out: array<{{T}}>;
{{BINDINGS}}

var<workgroup> tw_shared: array<{{ACC}}, 256>;

fn tw_param(i: u32) -> f32 { return bitcast<f32>(tw_meta[8u + i]); }

// one element's value to fold, from its loads' values
fn tw_value({{PARAMS}}) -> {{T}} {
{{CHAIN}}
    return {{LOAD}};
}

// vec4 i as folded; lanes at or past n hold the identity
fn tw_load4(i: u32, n: u32) -> vec4<{{T}}> {
    let e = 4u * i;
{{LOADS}}
    let v = vec4<{{T}}>({{LANES4}});
    if (e + 4u <= n) { return v; }
    let id = {{IDENTITY}};
    return vec4<{{T}}>(select(id, v.x, e < n), select(id, v.y, e + 1u < n), select(id, v.z, e + 2u < n), id);
}

// a thread's accumulator after one more vec4, and its value once its loop is done
fn tw_add4(acc: {{LANES}}, v: vec4<{{T}}>) -> {{LANES}} {
    return {{ADD4}};
}
fn tw_done(acc: {{LANES}}) -> {{ACC}} {
    {{DONE}}
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
{{ACC_DECL}}
{{UNROLLED}}
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
