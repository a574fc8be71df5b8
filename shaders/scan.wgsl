// Scan template (cumulative_sum, cumulative_prod): an inclusive running fold along each of `rows` contiguous
// rows of `cols` elements, rows in parallel. Workgroups take blocks of at most BLOCK elements: short rows
// (cols <= BLOCK) K whole rows to a block, a long row several blocks. Where a row has more than one block,
// three passes: `reduce` folds each block into partials[block], `carry` (a workgroup per row) turns the row's
// partials into exclusive prefixes in place, and `scan` scans each block from its prefix; short rows are
// `scan` alone. A block goes through workgroup memory (tw_tile: coalesced loads and stores); each thread
// scans PER consecutive elements of it, restarting at each row's first element, then the threads' (head,
// value) pairs are scanned across the workgroup as a segmented scan (tw_wg_scan: a value after a row's start
// does not take what came before it).
// kernels/scan.py fills in T (the WGSL scalar), COMBINE (the dtype's function: tw_add, tw_mul_i32, ...) and
// IDENTITY (source.fold).
// tw_meta: [0] rows, [1] cols, [2] blocks per row (NB: 1 for short rows), [3] rows per block (K: 1 for long
// rows), [7] 1.0 (tw_one).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read_write> partials: array<{{T}}>;
@group(0) @binding(2) var<storage, read> x: array<{{T}}>;
@group(0) @binding(3) var<storage, read_write> y: array<{{T}}>;

const PER = 8u;
const BLOCK = 2048u;  // 256 threads x PER
var<workgroup> tw_scan: array<{{T}}, 256>;
var<workgroup> tw_heads: array<u32, 256>;
var<workgroup> tw_tile: array<{{T}}, 2112>;  // a block, one word of padding per 32

// where element e of a block sits in tw_tile: thread t's PER consecutive elements fall in distinct banks
fn tw_at(e: u32) -> u32 { return e + e / 32u; }

// the inclusive segmented scan of (head, v) across the workgroup (Hillis-Steele in workgroup memory): a
// thread holding a row's start keeps its own value; every thread reaches it
fn tw_wg_scan(lid: u32, head: bool, v: {{T}}) -> {{T}} {
    var acc = v;
    var h = head;
    tw_scan[lid] = acc;
    tw_heads[lid] = u32(h);
    workgroupBarrier();
    for (var o = 1u; o < 256u; o = o << 1u) {
        var left = {{IDENTITY}};
        var left_head = 0u;
        if (lid >= o) {
            left = tw_scan[lid - o];
            left_head = tw_heads[lid - o];
        }
        workgroupBarrier();
        if (!h) { acc = {{COMBINE}}(left, acc); }
        h = h || left_head != 0u;
        tw_scan[lid] = acc;
        tw_heads[lid] = u32(h);
        workgroupBarrier();
    }
    return acc;
}

// the exclusive prefix of thread lid after tw_wg_scan (the identity for thread 0)
fn tw_before(lid: u32) -> {{T}} {
    if (lid == 0u) { return {{IDENTITY}}; }
    return tw_scan[lid - 1u];
}

// (first element, element count) of block g: row group g / NB of K rows, its block g % NB
fn tw_block(g: u32) -> vec2<u32> {
    let rows = tw_meta[0];
    let cols = tw_meta[1];
    let nb = tw_meta[2];
    let k = tw_meta[3];
    let r = g / nb;
    let b = g % nb;
    return vec2<u32>(r * k * cols + b * BLOCK, min(BLOCK, min(k, rows - r * k) * cols - b * BLOCK));
}

// workgroups past the last block return whole (their barriers stay uniform)
fn tw_live(g: u32) -> bool {
    return g < (tw_meta[0] + tw_meta[3] - 1u) / tw_meta[3] * tw_meta[2];
}

@compute @workgroup_size(256)
fn reduce(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
          @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let g = wid.y * nwg.x + wid.x;
    if (!tw_live(g)) { return; }
    let block = tw_block(g);
    var acc = {{IDENTITY}};
    for (var k = 0u; k < PER; k = k + 1u) {
        let e = k * 256u + lid;
        if (e < block.y) { acc = {{COMBINE}}(acc, x[block.x + e]); }
    }
    let total = tw_wg_scan(lid, false, acc);
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
        tw_wg_scan(lid, false, v);
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
    if (!tw_live(g)) { return; }
    let block = tw_block(g);
    for (var k = 0u; k < PER; k = k + 1u) {  // the block into workgroup memory, coalesced
        let e = k * 256u + lid;
        if (e < block.y) { tw_tile[tw_at(e)] = x[block.x + e]; }
    }
    workgroupBarrier();
    var col = ((g % nb) * BLOCK + lid * PER) % cols;  // of the thread's first element in its row
    var run: array<{{T}}, 8>;
    var acc = {{IDENTITY}};
    var first = PER;  // the thread's first element that starts a row (PER: none)
    for (var k = 0u; k < PER; k = k + 1u) {
        let e = lid * PER + k;
        if (e < block.y) {
            let v = tw_tile[tw_at(e)];
            if (col == 0u) {
                acc = v;
                first = min(first, k);
            } else {
                acc = {{COMBINE}}(acc, v);
            }
        }
        run[k] = acc;
        col = select(col + 1u, 0u, col + 1u == cols);
    }
    tw_wg_scan(lid, first < PER, acc);
    var prefix = tw_before(lid);
    if (nb > 1u) { prefix = {{COMBINE}}(partials[g], prefix); }
    for (var k = 0u; k < PER; k = k + 1u) {  // tw_wg_scan's barriers: every thread has read its elements
        tw_tile[tw_at(lid * PER + k)] = select({{COMBINE}}(prefix, run[k]), run[k], k >= first);
    }
    workgroupBarrier();
    for (var k = 0u; k < PER; k = k + 1u) {  // and out, coalesced
        let e = k * 256u + lid;
        if (e < block.y) { y[block.x + e] = tw_tile[tw_at(e)]; }
    }
}
