// "valid" 2-D convolution without kernel flip (trueno's meaning; scipy.signal.correlate2d "valid").
// One output per thread, one loop over the kernel's taps in row-major order. A dispatch runs TAPS taps at
// most (kernels/conv.py sets it from the adapter's loop budget), from tap tw_meta[6]: a longer kernel takes
// several dispatches, each one after the first adding its partial sums to the output.
// tw_meta: [0] H, [1] W, [2] KH, [3] KW, [4] OH, [5] OW, [6] first tap.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> img: array<f32>;
@group(0) @binding(2) var<storage, read> ker: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

const TAPS: u32 = {{TAPS}}u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = tw_meta[1];
    let kw = tw_meta[3];
    let oh = tw_meta[4];
    let ow = tw_meta[5];
    let first = tw_meta[6];
    let i = (wid.y * nwg.x + wid.x) * 256u + lid;
    if (i >= oh * ow) { return; }
    let end = min(tw_meta[2] * kw, first + TAPS);
    var p = first / kw;  // the tap's kernel row and column
    var q = first % kw;
    var at = (i / ow + p) * w + i % ow + q;  // its image element
    var acc: f32 = 0.0;
    for (var t = first; t < end; t = t + 1u) {
        acc = acc + img[at] * ker[t];
        q = q + 1u;
        at = at + 1u;
        if (q == kw) { q = 0u; at = at + w - kw; }
    }
    if (first > 0u) { acc = out[i] + acc; }
    out[i] = acc;
}
