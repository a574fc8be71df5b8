// searchsorted: a binary search per element of x2 in the sorted x1, on the keys of shaders/sort_key.wgsl
// (NaN after every number, -0.0 equal to 0.0). "left": the first i with x1[i] >= v; "right": the first
// with x1[i] > v.
// tw_meta: [0] m (elements of x2), [1] n (of x1), [2] key kind, [3] right?

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> x1: array<u32>;
@group(0) @binding(2) var<storage, read> x2: array<u32>;
@group(0) @binding(3) var<storage, read_write> y: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.y * nwg.x * 256u + gid.x;
    if (i >= tw_meta[0]) { return; }
    let kind = tw_meta[2];
    let right = tw_meta[3] != 0u;
    let v = tw_key(x2[i], kind, false);
    var lo = 0u;
    var hi = tw_meta[1];
    while (lo < hi) {
        let mid = (lo + hi) >> 1u;
        let k = tw_key(x1[mid], kind, false);
        if (k < v || (right && k == v)) { lo = mid + 1u; } else { hi = mid; }
    }
    y[i] = lo;
}
