// Scan template (cumulative_sum, cumulative_prod): an inclusive running fold along each of `rows` contiguous
// rows of `cols` elements, rows in parallel. A row is cut into blocks of BLOCK elements, one workgroup each:
// where a row has more than one block, three passes: `reduce` folds each block into partials[block],
// `carry` (a workgroup per row) turns the row's partials into exclusive prefixes in place, and `scan` scans
// each block from its prefix; a row of one block is `scan` alone (no prefix). Within a block each thread
// scans PER consecutive elements, then the threads' totals are scanned across the workgroup (tw_wg_scan).
// kernels/scan.py fills in T (the WGSL scalar), COMBINE (the dtype's function: tw_add, tw_mul_i32, ...) and
// IDENTITY (source.fold).
// tw_meta: [0] rows, [1] cols, [2] blocks per row, [7] 1.0 (tw_one).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read_write> partials: array<{{T}}>;
@group(0) @binding(2) var<storage, read> x: array<{{T}}>;
@group(0) @binding(3) var<storage, read_write> y: array<{{T}}>;

const PER = 8u;
const BLOCK = 2048u;  // 256 threads x PER
var<workgroup> tw_scan: array<{{T}}, 256>;

// the inclusive scan of v across the workgroup (Hillis-Steele in workgroup memory); every thread reaches it
fn tw_wg_scan(lid: u32, v: {{T}}) -> {{T}} {
    var acc = v;
    tw_scan[lid] = acc;
    workgroupBarrier();
    for (var o = 1u; o < 256u; o = o << 1u) {
        var left = {{IDENTITY}};
        if (lid >= o) { left = tw_scan[lid - o]; }
        workgroupBarrier();
        acc = {{COMBINE}}(left, acc);
        tw_scan[lid] = acc;
        workgroupBarrier();
    }
    return acc;
}

// the exclusive prefix of thread lid after tw_wg_scan (the identity for thread 0)
fn tw_before(lid: u32) -> {{T}} {
    if (lid == 0u) { return {{IDENTITY}}; }
    return tw_scan[lid - 1u];
}

@compute @workgroup_size(256)
fn reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let cols = tw_meta[1];
    let nb = tw_meta[2];
    let g = wid.y * nwg.x + wid.x;
    if (g >= tw_meta[0] * nb) { return; }  // past the end (a whole workgroup: its barriers stay uniform)
    let start = (g / nb) * cols + (g % nb) * BLOCK;
    let count = min(BLOCK, cols - (g % nb) * BLOCK);
    var acc = {{IDENTITY}};
    for (var k = 0u; k < PER; k = k + 1u) {
        let e = k * 256u + lid;
        if (e < count) { acc = {{COMBINE}}(acc, x[start + e]); }
    }
    let total = tw_wg_scan(lid, acc);
    if (lid == 255u) { partials[g] = total; }
}

@compute @workgroup_size(256)
fn carry(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
         @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let nb = tw_meta[2];
    let row = wid.y * nwg.x + wid.x;
    if (row >= tw_meta[0]) { return; }
    var before = {{IDENTITY}};
    for (var c = 0u; c < nb; c = c + 256u) {
        let at = row * nb + c + lid;
        var v = {{IDENTITY}};
        if (c + lid < nb) { v = partials[at]; }
        tw_wg_scan(lid, v);
        let mine = {{COMBINE}}(before, tw_before(lid));
        before = {{COMBINE}}(before, tw_scan[255]);
        workgroupBarrier();
        if (c + lid < nb) { partials[at] = mine; }
    }
}

@compute @workgroup_size(256)
fn scan(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let cols = tw_meta[1];
    let nb = tw_meta[2];
    let g = wid.y * nwg.x + wid.x;
    if (g >= tw_meta[0] * nb) { return; }
    let start = (g / nb) * cols + (g % nb) * BLOCK;
    let count = min(BLOCK, cols - (g % nb) * BLOCK);
    var run: array<{{T}}, 8>;
    var acc = {{IDENTITY}};
    for (var k = 0u; k < PER; k = k + 1u) {
        let e = lid * PER + k;
        if (e < count) { acc = {{COMBINE}}(acc, x[start + e]); }
        run[k] = acc;
    }
    tw_wg_scan(lid, acc);
    var prefix = tw_before(lid);
    if (nb > 1u) { prefix = {{COMBINE}}(partials[g], prefix); }
    for (var k = 0u; k < PER; k = k + 1u) {
        let e = lid * PER + k;
        if (e < count) { y[start + e] = {{COMBINE}}(prefix, run[k]); }
    }
}
