// shaders/sort_radix.wgsl's ranking by subgroup ballots, where the adapter has subgroups (a warp-level
// multisplit, as in Onesweep): the lanes of a subgroup whose keys share a digit are found by one ballot a
// digit bit, so a key's rank among them is the count of those lanes below its own, with no workgroup barrier.
// Each subgroup ranks a run of PER x its size consecutive keys of the tile in rounds of one key a lane,
// counting each digit's keys so far in its own row of tw_stage (one atomic add a digit a round, by the lowest
// lane holding it, the result shuffled to the others); the rows, scanned across subgroups, then give each
// key its place among the tile's keys of its digit. Ballot masks are vec4<u32>: subgroups of up to 128 lanes.

const SG_MIN: u32 = {{SG_MIN}}u;  // the smallest subgroup that ranks by ballots: tw_stage holds THREADS / SG_MIN rows
const NARROW: u32 = {{NARROW}}u;  // subgroups of at most NARROW lanes (32 or 0) match digits by one-word ballots

var<workgroup> tw_unfit: atomic<u32>;  // set by a thread whose subgroup cannot rank by ballots
var<workgroup> tw_fit: u32;

// the lanes below `lane`, as a ballot mask
fn tw_lanes_below(lane: u32) -> vec4<u32> {
    var m = vec4<u32>();
    for (var k = 0u; k < 4u; k = k + 1u) {
        if (lane >= 32u * k + 32u) {
            m[k] = 0xffffffffu;
        } else if (lane > 32u * k) {
            m[k] = (1u << (lane - 32u * k)) - 1u;
        }
    }
    return m;
}

fn tw_ones(m: vec4<u32>) -> u32 {
    let c = countOneBits(m);
    return c.x + c.y + c.z + c.w;
}

// the lowest lane of a mask that has one
fn tw_lowest(m: vec4<u32>) -> u32 {
    if (m.x != 0u) { return firstTrailingBit(m.x); }
    if (m.y != 0u) { return 32u + firstTrailingBit(m.y); }
    if (m.z != 0u) { return 64u + firstTrailingBit(m.z); }
    return 96u + firstTrailingBit(m.w);
}

// the lanes of this subgroup with a valid key whose digit is `digit` (every lane calls it: ballots)
fn tw_match(digit: u32, valid: bool) -> vec4<u32> {
    var m = subgroupBallot(valid);
    for (var k = 0u; k < BITS; k = k + 1u) {
        let on = ((digit >> k) & 1u) != 0u;
        let v = subgroupBallot(on);
        m = m & select(~v, v, on);
    }
    return m;
}

// tw_match for subgroups of at most 32 lanes: the first word of each ballot (the others are zero)
fn tw_match32(digit: u32, valid: bool) -> u32 {
    var m = subgroupBallot(valid).x;
    for (var k = 0u; k < BITS; k = k + 1u) {
        let on = ((digit >> k) & 1u) != 0u;
        let v = subgroupBallot(on).x;
        m = m & select(~v, v, on);
    }
    return m;
}

// can the whole workgroup rank by ballots: subgroups of SG_MIN lanes or more that divide THREADS, each of
// consecutive invocations (lane = t % size, as drivers make them; a row of counts a subgroup within
// tw_stage)? One answer for every thread.
fn tw_ballots_fit(t: u32, sg: u32, lane: u32) -> bool {
    if (t == 0u) { atomicStore(&tw_unfit, 0u); }
    workgroupBarrier();
    if (sg < SG_MIN || THREADS % sg != 0u || lane != t % sg) { atomicOr(&tw_unfit, 1u); }
    workgroupBarrier();
    if (t == 0u) { tw_fit = atomicLoad(&tw_unfit); }
    return workgroupUniformLoad(&tw_fit) == 0u;
}

// the sum of `own` over the threads before t, by subgroup scans (tw_ballots_fit's subgroups): fewer barriers
// than tw_scan_threads
fn tw_scan_subgroups(own: u32, t: u32, sg: u32) -> u32 {
    let before = subgroupExclusiveAdd(own);
    if (t % sg == sg - 1u) { tw_sums[t / sg] = before + own; }
    workgroupBarrier();
    if (t == 0u) {
        var run = 0u;
        for (var v = 0u; v < THREADS / sg; v = v + 1u) {
            let total = tw_sums[v];
            tw_sums[v] = run;
            run = run + total;
        }
    }
    workgroupBarrier();
    return tw_sums[t / sg] + before;
}

// this thread's keys of row r, at columns first + i * stride (i < PER, those before n): every load in flight
// before the ranking waits on the first (and before radix_move reads the tile's bases)
fn tw_load_keys(r: u32, first: u32, stride: u32) {
    for (var i = 0u; i < PER; i = i + 1u) {
        let c = first + i * stride;
        if (c < tw_meta[1]) { tw_keys[i] = tw_key_of(r, c); }
    }
}

// the first key of the tile that this thread ranks by ballots (then every sg-th, PER keys)
fn tw_ballot_first(t: u32, sg: u32, lane: u32) -> u32 { return t / sg * PER * sg + lane; }

// the keys of tile b (tw_keys, from tw_load_keys: this thread's key i is the tile's tw_ballot_first + i * sg)
// ranked by ballots; tw_run[d] ends as the tile's count of digit d (then tw_tile_starts)
fn tw_rank_ballots(b: u32, t: u32, sg: u32, lane: u32) {
    let n = tw_meta[1];
    let w = t / sg;  // this subgroup: its counts are tw_stage[w * RADIX + digit]
    let first = tw_ballot_first(t, sg, lane);
    let below = tw_lanes_below(lane);
    for (var i = 0u; i < PER; i = i + 1u) {
        let valid = b * TILE + first + i * sg < n;
        var digit = 0u;
        if (valid) { digit = tw_digit(tw_keys[i]); }
        var before: u32;  // lanes below this one holding its digit
        var same: u32;  // lanes holding its digit
        var lowest: u32;  // the lowest of them
        if (sg <= NARROW) {  // one-word ballots: a quarter of the mask arithmetic
            let m = tw_match32(digit, valid);
            before = countOneBits(m & below.x);
            same = countOneBits(m);
            lowest = firstTrailingBit(m);
        } else {
            let m = tw_match(digit, valid);
            before = tw_ones(m & below);
            same = tw_ones(m);
            lowest = tw_lowest(m);
        }
        var so_far = 0u;  // the subgroup's keys of this digit in earlier rounds (the lowest lane's add)
        if (valid && before == 0u) { so_far = atomicAdd(&tw_stage[w * RADIX + digit], same); }
        tw_ranks[i] = subgroupShuffle(so_far, select(lane, lowest, valid)) + before;
    }
    workgroupBarrier();
    for (var d = t; d < RADIX; d = d + THREADS) {  // each row's counts to the keys of earlier subgroups
        var run = 0u;
        for (var v = 0u; v < THREADS / sg; v = v + 1u) {
            let count = atomicLoad(&tw_stage[v * RADIX + d]);
            atomicStore(&tw_stage[v * RADIX + d], run);
            run = run + count;
        }
        tw_run[d] = run;
    }
    workgroupBarrier();
    for (var i = 0u; i < PER; i = i + 1u) {
        if (b * TILE + first + i * sg < n) { tw_ranks[i] = tw_ranks[i] + atomicLoad(&tw_stage[w * RADIX + tw_digit(tw_keys[i])]); }
    }
    workgroupBarrier();  // tw_stage read before the staging writes it
}
