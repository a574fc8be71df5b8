// Sort (or argsort) along the last axis of rows of at most BLOCK (longer rows: shaders/sort_radix.wgsl): a
// bitonic network over (key, index) pairs (shaders/sort_key.wgsl's keys), ascending by (key, index), so ties
// keep their input order (stable by construction). Each row is padded to a power of two P with pairs
// (0xffffffff, c >= n), which sort after every real pair.
// The network is the "flip" form: for each size k, pair i of a k-segment meets k - 1 - i, then half-cleaners
// of distance k/4 ... 1 meet i and i + d, all ascending, so every k-segment ends sorted.
// sort_small: BLOCK / P rows per workgroup, sorted in workgroup memory; y gets the values x[row, index]
// or, where flags & 8, the indices.
// tw_meta: [0] rows, [1] n (row length), [2] P, [3] flags: key kind | descending << 2 | indices << 3,
//          [7] rows per workgroup.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<u32>;

const BLOCK: u32 = 2048u;
const THREADS: u32 = 256u;
var<workgroup> tw_pairs: array<vec2<u32>, 2048>;

fn tw_before(a: vec2<u32>, b: vec2<u32>) -> bool { return a.x < b.x || (a.x == b.x && a.y < b.y); }

fn tw_group(wg: vec3<u32>, nwg: vec3<u32>) -> u32 { return wg.y * nwg.x + wg.x; }

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
