// "valid" 2-D convolution without kernel flip (trueno's meaning; scipy.signal.correlate2d "valid").
// One output per thread. tw_meta: [0] H, [1] W, [2] KH, [3] KW, [4] OH, [5] OW.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> img: array<f32>;
@group(0) @binding(2) var<storage, read> ker: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = tw_meta[1];
    let kh = tw_meta[2];
    let kw = tw_meta[3];
    let oh = tw_meta[4];
    let ow = tw_meta[5];
    let i = (wid.y * nwg.x + wid.x) * 256u + lid;
    if (i >= oh * ow) { return; }
    let r = i / ow;
    let c = i % ow;
    var acc: f32 = 0.0;
    for (var p = 0u; p < kh; p = p + 1u) {
        let row = (r + p) * w + c;
        for (var q = 0u; q < kw; q = q + 1u) {
            acc = acc + img[row + q] * ker[p * kw + q];
        }
    }
    out[i] = acc;
}
