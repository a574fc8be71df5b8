// Sort (or argsort) of rows longer than a workgroup's block: an LSD radix sort of shaders/sort_key.wgsl's
// keys, BITS bits a pass from the lowest, PASSES passes, each stable, so ties keep their input order.
// A row is cut into tiles of TILE keys (THREADS threads x PER keys); a pass is four dispatches:
//   radix_count: each tile's count per digit (workgroup atomics), to the row's digit-major counts
//   radix_scan:  those counts scanned in chunks of SCAN_TILE (exclusive), each chunk's total to the sums
//   radix_carry: each row's chunk totals scanned (exclusive): a count plus its chunk's sum is the tile's
//                first place in the row for its digit
//   radix_move:  each tile ranks its keys among equal digits in input order and writes key and payload to
//                their places; STAGED: in digit order through workgroup memory first, so that neighbouring
//                threads write neighbouring places. The ranks: tw_rank_masks (a round of THREADS keys at a
//                time: a bit per thread in its digit's mask, the bits below it counted), or, where the
//                adapter has subgroups, shaders/sort_radix_ballot.wgsl's tw_rank_ballots
// kernels/sort_radix.py fills in SG_ARGS (radix_move's subgroup builtins, or nothing), LAYOUT (which keys
// a thread of radix_move takes) and RANK (which ranking it runs).
// Pass 0 reads x (the payload: the value's bits, or the index where flags & 8), the last writes the payloads
// to y; between them (key, payload) arrays ping-pong between two halves of the scratch buffer `s`. A sort's
// payload moves only with the keys that are not their values' bits rearranged (tw_carries_payload: float32's
// zeros and NaNs); the last pass writes the others' values from their keys (tw_value_of).
// s, in words, R = rows x n of this chunk: half h's keys at 2hR, payloads at 2hR + R; at 4R each row's
// RADIX x B counts (digit-major: digit d of tile b at d B + b), then each row's C chunk totals.
// tw_meta: [0] rows (of this chunk), [1] n (row length), [2] B (tiles a row), [3] flags: key kind |
//          descending << 2 | indices << 3, [4] the pass, [5] first row of this chunk, [6] C (scan chunks a row).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> x: array<u32>;
@group(0) @binding(2) var<storage, read_write> y: array<u32>;
@group(0) @binding(3) var<storage, read_write> s: array<u32>;

const BITS: u32 = {{BITS}}u;
const PASSES: u32 = {{PASSES}}u;
const RADIX: u32 = {{RADIX}}u;
const THREADS: u32 = {{THREADS}}u;
const PER: u32 = {{PER}}u;
const TILE: u32 = {{TILE}}u;
const WORDS: u32 = {{WORDS}}u;  // mask words a digit: THREADS / 32
const MASKS: u32 = {{MASKS}}u;  // RADIX x WORDS
const CLEAR: u32 = {{CLEAR}}u;  // words of tw_stage radix_move zeroes: its masks, or its counts (ballots)
const SPAN: u32 = {{SPAN}}u;  // digits a thread of a scan of the digits: RADIX / THREADS rounded up
const STAGED: bool = {{STAGED}};
const SCAN_PER: u32 = {{SCAN_PER}}u;
const SCAN_TILE: u32 = {{SCAN_TILE}}u;

var<workgroup> tw_counts: array<atomic<u32>, {{RADIX}}>;
var<workgroup> tw_stage: array<atomic<u32>, {{STAGE}}>;  // radix_move's masks or counts, then its tile in digit order
var<workgroup> tw_run: array<u32, {{RADIX}}>;
var<workgroup> tw_base: array<u32, {{RADIX}}>;
var<workgroup> tw_sums: array<u32, {{THREADS}}>;
var<workgroup> tw_carrying: atomic<u32>;  // radix_move: a key of the tile carries its payload
var<workgroup> tw_carries: u32;  // (tw_carrying read by one thread, for workgroupUniformLoad)
var<private> tw_keys: array<u32, PER>;  // radix_move: this thread's keys and each one's place among the tile's
var<private> tw_ranks: array<u32, PER>;  // keys of its digit (payloads are read when they are written: fewer registers)

fn tw_group(wg: vec3<u32>, nwg: vec3<u32>) -> u32 { return wg.y * nwg.x + wg.x; }

fn tw_region() -> u32 { return tw_meta[0] * tw_meta[1]; }

// words of s before the counts of row r, and before its chunk totals
fn tw_counts_at(r: u32) -> u32 { return 4u * tw_region() + r * RADIX * tw_meta[2]; }
fn tw_sums_at(r: u32) -> u32 { return 4u * tw_region() + tw_meta[0] * RADIX * tw_meta[2] + r * tw_meta[6]; }

// the key of element c of row r (of this chunk) as this pass reads it
fn tw_key_of(r: u32, c: u32) -> u32 {
    let n = tw_meta[1];
    let step = tw_meta[4];
    if (step == 0u) {
        let flags = tw_meta[3];
        return tw_key(x[(tw_meta[5] + r) * n + c], flags & 3u, (flags & 4u) != 0u);
    }
    return s[((step - 1u) & 1u) * 2u * tw_region() + r * n + c];
}

// the payload of element c of row r: the value's bits or its index (pass 0), else the previous pass's
fn tw_payload_of(r: u32, c: u32) -> u32 {
    let n = tw_meta[1];
    let step = tw_meta[4];
    if (step == 0u) {
        return select(x[(tw_meta[5] + r) * n + c], c, (tw_meta[3] & 8u) != 0u);
    }
    return s[((step - 1u) & 1u) * 2u * tw_region() + tw_region() + r * n + c];
}

fn tw_digit(key: u32) -> u32 { return (key >> (tw_meta[4] * BITS)) & (RADIX - 1u); }

@compute @workgroup_size({{THREADS}})
fn radix_count(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let tiles = tw_meta[2];
    let g = tw_group(wg, nwg);
    let r = g / tiles;
    let b = g % tiles;
    if (r >= tw_meta[0]) { return; }
    for (var d = t; d < RADIX; d = d + THREADS) { atomicStore(&tw_counts[d], 0u); }  // (not zeroed by every driver)
    workgroupBarrier();
    let n = tw_meta[1];
    for (var i = 0u; i < PER; i = i + 1u) {
        let c = b * TILE + i * THREADS + t;
        if (c < n) { atomicAdd(&tw_counts[tw_digit(tw_key_of(r, c))], 1u); }
    }
    workgroupBarrier();
    for (var d = t; d < RADIX; d = d + THREADS) {
        s[tw_counts_at(r) + d * tiles + b] = atomicLoad(&tw_counts[d]);
    }
}

// the sum of `own` over the threads before t; tw_sums[THREADS - 1] holds the workgroup's total until the
// next call (an inclusive Hillis-Steele scan of the threads' sums)
fn tw_scan_threads(own: u32, t: u32) -> u32 {
    tw_sums[t] = own;
    workgroupBarrier();
    for (var d = 1u; d < THREADS; d = d << 1u) {
        var v = tw_sums[t];
        if (t >= d) { v = v + tw_sums[t - d]; }
        workgroupBarrier();
        tw_sums[t] = v;
        workgroupBarrier();
    }
    return tw_sums[t] - own;
}

// s[at, at + len) scanned exclusive in place, from `carry`, SCAN_PER consecutive words a thread: the total
fn tw_scan_tile(at: u32, len: u32, carry: u32, t: u32) -> u32 {
    var own = 0u;
    for (var i = 0u; i < SCAN_PER; i = i + 1u) {
        let e = t * SCAN_PER + i;
        if (e < len) { own = own + s[at + e]; }
    }
    var run = carry + tw_scan_threads(own, t);
    for (var i = 0u; i < SCAN_PER; i = i + 1u) {
        let e = t * SCAN_PER + i;
        if (e < len) {
            let v = s[at + e];
            s[at + e] = run;
            run = run + v;
        }
    }
    let total = tw_sums[THREADS - 1u];
    workgroupBarrier();  // every thread has read the total before the next tile writes tw_sums
    return total;
}

@compute @workgroup_size({{THREADS}})
fn radix_scan(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let chunks = tw_meta[6];
    let g = tw_group(wg, nwg);
    let r = g / chunks;
    let k = g % chunks;
    if (r >= tw_meta[0]) { return; }
    let size = RADIX * tw_meta[2];
    let total = tw_scan_tile(tw_counts_at(r) + k * SCAN_TILE, min(SCAN_TILE, size - k * SCAN_TILE), 0u, t);
    if (t == 0u) { s[tw_sums_at(r) + k] = total; }
}

@compute @workgroup_size({{THREADS}})
fn radix_carry(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = tw_group(wg, nwg);
    if (r >= tw_meta[0]) { return; }
    let chunks = tw_meta[6];
    var carry = 0u;
    for (var k = 0u; k < chunks; k = k + SCAN_TILE) {
        carry = carry + tw_scan_tile(tw_sums_at(r) + k, min(SCAN_TILE, chunks - k), carry, t);
    }
}

// does this key carry its payload through the passes: every key of an argsort (its index); in a sort, the
// keys that are not their value's bits rearranged, float32's zeros (-0.0 and 0.0: one key) and NaNs (one key).
// The others' payloads are neither read nor written: the last pass writes their values from their keys.
fn tw_carries_payload(key: u32) -> bool {
    let flags = tw_meta[3];
    let k = select(key, ~key, (flags & 4u) != 0u);
    return (flags & 8u) != 0u || ((flags & 3u) == 2u && (k == 0x80000000u || k == 0xffffffffu));
}

// the value whose key (sort_key.wgsl's tw_key) is `key`, for a key that carries no payload
fn tw_value_of(key: u32) -> u32 {
    let flags = tw_meta[3];
    let k = select(key, ~key, (flags & 4u) != 0u);
    if ((flags & 3u) == 1u) { return k ^ 0x80000000u; }
    if ((flags & 3u) == 2u) { return select(~k, k & 0x7fffffffu, k >= 0x80000000u); }
    return k;
}

// the payload at `place` of row r: to y in the last pass, else after the keys `out` of the half written
fn tw_put(r: u32, out: u32, last: bool, place: u32, payload: u32) {
    if (last) {
        y[(tw_meta[5] + r) * tw_meta[1] + place] = payload;
    } else {
        s[out + tw_region() + place] = payload;
    }
}

// the tile's count of the digits this thread scans (tw_run holds the counts)
fn tw_tile_own(t: u32) -> u32 {
    var own = 0u;
    for (var i = 0u; i < SPAN; i = i + 1u) {
        let d = t * SPAN + i;
        if (d < RADIX) { own = own + tw_run[d]; }
    }
    return own;
}

// each digit's first place in the tile's keys sorted by digit, to tw_run (which held its count), from `at`,
// tw_tile_own's sum over the threads before t; tw_base minus it, so that the key at place j of that order
// goes to tw_base[digit] + j
fn tw_tile_starts(t: u32, at: u32) {
    var run = at;
    for (var i = 0u; i < SPAN; i = i + 1u) {
        let d = t * SPAN + i;
        if (d < RADIX) {
            let count = tw_run[d];
            tw_run[d] = run;
            tw_base[d] = tw_base[d] - run;
            run = run + count;
        }
    }
    workgroupBarrier();
}

// the keys of row r, tile b, this thread's (tw_keys[i]: the tile's t + i * THREADS, read here) ranked by
// workgroup-memory masks, a round of THREADS keys at a time; tw_run[d] ends as the tile's count of digit d
// (then tw_tile_starts)
fn tw_rank_masks(r: u32, b: u32, t: u32) {
    let n = tw_meta[1];
    let word = t / 32u;
    let bit = 1u << (t % 32u);
    for (var i = 0u; i < PER; i = i + 1u) {
        let valid = b * TILE + i * THREADS + t < n;
        var digit = 0u;
        if (valid) {
            tw_keys[i] = tw_key_of(r, b * TILE + i * THREADS + t);
            digit = tw_digit(tw_keys[i]);
            atomicOr(&tw_stage[digit * WORDS + word], bit);
        }
        workgroupBarrier();
        var below = 0u;  // threads before t with this digit, this round
        var total = 0u;  // threads with this digit, this round
        if (valid) {
            for (var w = 0u; w < WORDS; w = w + 1u) {
                let m = atomicLoad(&tw_stage[digit * WORDS + w]);
                total = total + countOneBits(m);
                if (w < word) { below = below + countOneBits(m); }
            }
            below = below + countOneBits(atomicLoad(&tw_stage[digit * WORDS + word]) & (bit - 1u));
            tw_ranks[i] = tw_run[digit] + below;
        }
        workgroupBarrier();
        if (valid && below == 0u) {  // the digit's first thread: the tile's count so far, its mask cleared
            tw_run[digit] = tw_ranks[i] + total;
            for (var w = 0u; w < WORDS; w = w + 1u) { atomicStore(&tw_stage[digit * WORDS + w], 0u); }
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size({{THREADS}})
fn radix_move(@builtin(local_invocation_index) t: u32, @builtin(workgroup_id) wg: vec3<u32>,
         @builtin(num_workgroups) nwg: vec3<u32>{{SG_ARGS}}) {
    let tiles = tw_meta[2];
    let g = tw_group(wg, nwg);
    let r = g / tiles;
    let b = g % tiles;
    if (r >= tw_meta[0]) { return; }
    let n = tw_meta[1];
    var lay = vec2<u32>(t, THREADS);  // this thread's key i is the tile's key lay.x + i * lay.y
    {{LAYOUT}}
    for (var d = t; d < RADIX; d = d + THREADS) {
        let at = d * tiles + b;
        tw_base[d] = s[tw_counts_at(r) + at] + s[tw_sums_at(r) + at / SCAN_TILE];
        tw_run[d] = 0u;
    }
    for (var m = t; m < CLEAR; m = m + THREADS) { atomicStore(&tw_stage[m], 0u); }  // (not zeroed by every driver)
    if (t == 0u) { atomicStore(&tw_carrying, 0u); }
    workgroupBarrier();
    let step = tw_meta[4];
    let last = step + 1u == PASSES;
    let out = (step & 1u) * 2u * tw_region() + r * n;  // this row's keys in the half written
    {{RANK}}  // (then tw_tile_starts)
    let first = b * TILE + lay.x;
    if (!STAGED) {  // each key straight to its place
        for (var i = 0u; i < PER; i = i + 1u) {
            if (first + i * lay.y < n) {
                let key = tw_keys[i];
                let digit = tw_digit(key);
                let place = tw_base[digit] + tw_run[digit] + tw_ranks[i];
                if (!last) { s[out + place] = key; }
                if (tw_carries_payload(key)) {
                    tw_put(r, out, last, place, tw_payload_of(r, first + i * lay.y));
                } else if (last) {
                    y[(tw_meta[5] + r) * n + place] = tw_value_of(key);
                }
            }
        }
        return;
    }
    // else the tile's keys, then (where any carries one) its payloads, in digit order through workgroup memory,
    // so that neighbouring threads write neighbouring places
    let size = min(TILE, n - b * TILE);
    for (var i = 0u; i < PER; i = i + 1u) {
        if (first + i * lay.y < n) {
            atomicStore(&tw_stage[tw_run[tw_digit(tw_keys[i])] + tw_ranks[i]], tw_keys[i]);
        }
    }
    workgroupBarrier();
    var places: array<u32, PER>;
    var carried = 0u;  // bit i: the key at place i * THREADS + t of the tile's order carries its payload
    for (var i = 0u; i < PER; i = i + 1u) {
        let j = i * THREADS + t;
        if (j < size) {
            let key = atomicLoad(&tw_stage[j]);
            places[i] = tw_base[tw_digit(key)] + j;
            if (!last) { s[out + places[i]] = key; }
            if (tw_carries_payload(key)) {
                carried = carried | (1u << i);
            } else if (last) {
                y[(tw_meta[5] + r) * n + places[i]] = tw_value_of(key);
            }
        }
    }
    if (carried != 0u) { atomicOr(&tw_carrying, 1u); }
    workgroupBarrier();
    if (t == 0u) { tw_carries = atomicLoad(&tw_carrying); }
    if (workgroupUniformLoad(&tw_carries) == 0u) { return; }
    for (var i = 0u; i < PER; i = i + 1u) {
        if (first + i * lay.y < n && tw_carries_payload(tw_keys[i])) {
            atomicStore(&tw_stage[tw_run[tw_digit(tw_keys[i])] + tw_ranks[i]], tw_payload_of(r, first + i * lay.y));
        }
    }
    workgroupBarrier();
    for (var i = 0u; i < PER; i = i + 1u) {
        if ((carried & (1u << i)) != 0u) { tw_put(r, out, last, places[i], atomicLoad(&tw_stage[i * THREADS + t])); }
    }
}
