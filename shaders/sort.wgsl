// Sort (or argsort) along the last axis: a bitonic network over (key, index) pairs (shaders/sort_key.wgsl's
// keys), ascending by (key, index), so ties keep their input order (stable by construction). Each row is
// padded to a power of two P with pairs (0xffffffff, c >= n), which sort after every real pair.
// The network is the "flip" form: for each size k, pair i of a k-segment meets k - 1 - i, then half-cleaners
// of distance k/4 ... 1 meet i and i + d, all ascending, so every k-segment ends sorted.
//   sort_small:  P <= BLOCK: BLOCK / P rows per workgroup, sorted in workgroup memory, written to y
//   sort_first:  P > BLOCK: each BLOCK of a row sorted in workgroup memory, to parts
//   sort_across: one step of the network across blocks (distance >= BLOCK) on parts
//   sort_across2: two such steps in one pass, four pairs a thread
//   sort_merge:  the steps of distance < BLOCK of one size k, in workgroup memory, parts to parts
//   sort_last:   merge's steps for the last size k = P, written to y
// y gets the values x[row, index] or, where flags & 8, the indices.
// tw_meta: [0] rows (of this chunk), [1] n (row length), [2] P, [3] flags: key kind | descending << 2 |
//          indices << 3, [4] k (sort_across: the size), [5] d (its distance; 0: the flip of size k),
//          [6] first row of this chunk, [7] rows per workgroup (small).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<u32>;
@group(0) @binding(3) var<storage, read_write> parts: array<vec2<u32>>;

const BLOCK: u32 = 2048u;
const THREADS: u32 = 256u;
var<workgroup> tw_pairs: array<vec2<u32>, 2048>;

fn tw_before(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x < b.x || (a.x == b.x && a.y < b.y); }

fn tw_group(wg: vec3<u32>, nwg: vec3<u32>) -> u32 { return wg.y * nwg.x + wg.x; }

// the smaller pair to a
fn tw_exchange(a: ptr<function, vec2<u32>>, b: ptr<function, vec2<u32>>) {
    let x = *a;
    let y = *b;
    if (tw_before(y, x)) {
        *a = y;
        *b = x;
    }
}

// the pair of element c of row r (a pad past n)
fn tw_load(r: u32, c: u32) -> vec2<u32> {
    let n = tw_meta[1];
    if (c >= n) { return vec2<u32>(0xffffffffu, c); }
    let flags = tw_meta[3];
    return vec2<u32>(tw_key(x[r * n + c], flags & 3u, (flags & 4u) != 0u), c);
}

// element c of row r of y: the value at the pair's index, or the index
fn tw_store(r: u32, c: u32, index: u32) {
    let n = tw_meta[1];
    y[r * n + c] = select(x[r * n + index], index, (tw_meta[3] & 8u) != 0u);
}

// compare-exchange of shared pairs i < j: the smaller to i
fn tw_order(i: u32, j: u32) {
    let a = tw_pairs[i];
    let b = tw_pairs[j];
    if (tw_before(b, a)) {
        tw_pairs[i] = b;
        tw_pairs[j] = a;
    }
}

// half-cleaners of distance d = widest, widest / 2, ..., 1 on the shared block
fn tw_half_cleaners(widest: u32, t: u32) {
    for (var d = widest; d > 0u; d = d >> 1u) {
        for (var q = t; q < BLOCK / 2u; q = q + THREADS) {
            let i = (q / d) * 2u * d + q % d;
            tw_order(i, i + d);
        }
        workgroupBarrier();
    }
}

// every segment of `upto` shared pairs sorted ascending
fn tw_sort_shared(upto: u32, t: u32) {
    for (var k = 2u; k <= upto; k = k << 1u) {
        let h = k >> 1u;
        for (var q = t; q < BLOCK / 2u; q = q + THREADS) {
            let base = (q / h) * k;
            let off = q % h;
            tw_order(base + off, base + k - 1u - off);
        }
        workgroupBarrier();
        tw_half_cleaners(h >> 1u, t);
    }
}

@compute @workgroup_size(256)
fn sort_small(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let rows = tw_meta[0];
    let p = tw_meta[2];
    let first = tw_group(wg, nwg) * tw_meta[7];
    for (var e = t; e < BLOCK; e = e + THREADS) {
        let r = first + e / p;
        var pair = vec2<u32>(0xffffffffu, e);
        if (r < rows) { pair = tw_load(r, e % p); }
        tw_pairs[e] = pair;
    }
    workgroupBarrier();
    tw_sort_shared(p, t);
    let n = tw_meta[1];
    for (var e = t; e < BLOCK; e = e + THREADS) {
        let r = first + e / p;
        if (r < rows && e % p < n) { tw_store(r, e % p, tw_pairs[e].y); }
    }
}

// the workgroup's block: (row of the chunk, first column)
fn tw_block(wg: vec3<u32>, nwg: vec3<u32>) -> vec2<u32> {
    let per_row = tw_meta[2] / BLOCK;
    let g = tw_group(wg, nwg);
    return vec2<u32>(g / per_row, (g % per_row) * BLOCK);
}

@compute @workgroup_size(256)
fn sort_first(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let at = tw_block(wg, nwg);
    if (at.x >= tw_meta[0]) { return; }
    for (var e = t; e < BLOCK; e = e + THREADS) { tw_pairs[e] = tw_load(tw_meta[6] + at.x, at.y + e); }
    workgroupBarrier();
    tw_sort_shared(BLOCK, t);
    let base = at.x * tw_meta[2] + at.y;
    for (var e = t; e < BLOCK; e = e + THREADS) { parts[base + e] = tw_pairs[e]; }
}

// a thread of a pass across blocks, `per_row` threads a row: (row of the chunk, its place in the row)
fn tw_across(gid: vec3<u32>, nwg: vec3<u32>, per_row: u32) -> vec2<u32> {
    let id = gid.y * nwg.x * THREADS + gid.x;
    return vec2<u32>(id / per_row, id % per_row);
}

@compute @workgroup_size(256)
fn sort_across(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = tw_meta[2];
    let rq = tw_across(gid, nwg, p / 2u);
    if (rq.x >= tw_meta[0]) { return; }
    let r = rq.x;
    let q = rq.y;
    let k = tw_meta[4];
    let d = tw_meta[5];
    var i: u32;
    var j: u32;
    if (d == 0u) {
        let h = k >> 1u;
        i = (q / h) * k + q % h;
        j = (q / h) * k + k - 1u - q % h;
    } else {
        i = (q / d) * 2u * d + q % d;
        j = i + d;
    }
    let a = parts[r * p + i];
    let b = parts[r * p + j];
    if (tw_before(b, a)) {
        parts[r * p + i] = b;
        parts[r * p + j] = a;
    }
}

// two steps of the network in one pass, each thread on four pairs of parts: the flip of size k and the
// half-cleaner of distance k/4 where d = 0, else the half-cleaners of distances d and d/2
@compute @workgroup_size(256)
fn sort_across2(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = tw_meta[2];
    let rq = tw_across(gid, nwg, p / 4u);
    if (rq.x >= tw_meta[0]) { return; }
    let r = rq.x;
    let q = rq.y;
    let k = tw_meta[4];
    let d = tw_meta[5];
    var at: vec4<u32>;  // the first step's pairs (a0, a2), (a1, a3), or the flip's (a0, a3), (a1, a2); the second's
    if (d == 0u) {      // (a0, a1), (a2, a3)
        let h = k >> 2u;
        let base = r * p + (q / h) * k;
        at = vec4<u32>(base + q % h, base + q % h + h, base + k - 1u - q % h - h, base + k - 1u - q % h);
    } else {
        let h = d >> 1u;
        let base = r * p + (q / h) * 2u * d + q % h;
        at = vec4<u32>(base, base + h, base + d, base + d + h);
    }
    var v0 = parts[at.x];
    var v1 = parts[at.y];
    var v2 = parts[at.z];
    var v3 = parts[at.w];
    if (d == 0u) {
        tw_exchange(&v0, &v3);
        tw_exchange(&v1, &v2);
    } else {
        tw_exchange(&v0, &v2);
        tw_exchange(&v1, &v3);
    }
    tw_exchange(&v0, &v1);
    tw_exchange(&v2, &v3);
    parts[at.x] = v0;
    parts[at.y] = v1;
    parts[at.z] = v2;
    parts[at.w] = v3;
}

@compute @workgroup_size(256)
fn sort_merge(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let at = tw_block(wg, nwg);
    if (at.x >= tw_meta[0]) { return; }
    let base = at.x * tw_meta[2] + at.y;
    for (var e = t; e < BLOCK; e = e + THREADS) { tw_pairs[e] = parts[base + e]; }
    workgroupBarrier();
    tw_half_cleaners(BLOCK / 2u, t);
    for (var e = t; e < BLOCK; e = e + THREADS) { parts[base + e] = tw_pairs[e]; }
}

@compute @workgroup_size(256)
fn sort_last(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let at = tw_block(wg, nwg);
    if (at.x >= tw_meta[0]) { return; }
    let base = at.x * tw_meta[2] + at.y;
    for (var e = t; e < BLOCK; e = e + THREADS) { tw_pairs[e] = parts[base + e]; }
    workgroupBarrier();
    tw_half_cleaners(BLOCK / 2u, t);
    let n = tw_meta[1];
    for (var e = t; e < BLOCK; e = e + THREADS) {
        if (at.y + e < n) { tw_store(tw_meta[6] + at.x, at.y + e, tw_pairs[e].y); }
    }
}
