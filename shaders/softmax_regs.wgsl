// softmax.wgsl's one-pass kernel where a thread's vectors of its row fit in registers (r0 .. r{REGS-1}:
// kernels/softmax.py writes out DECLS, LOADS, SUM, SUM_LOG, STORE and STORE_LOG for them): the row is read
// once, each thread takes its own max m, then its terms tw_term(x, m) (one tw_exp an element), their sum a
// compensated pair; the states (m, sum) merge as main's do. softmax writes term * c with
// c = tw_exp(m - max) / sum (one tw_exp and one division a thread; NaN where max is -inf: every element -inf,
// whose x - max is NaN), log_softmax (x - max) - log(sum) from the row kept as it was read.
@compute @workgroup_size(256)
fn main_regs(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let rows = tw_meta[0];
    let cv = tw_meta[5];
    let tpr = tw_meta[6];
    let lane = lid & (tpr - 1u);
    let row = (wid.y * nwg.x + wid.x) * (256u / tpr) + lid / tpr;
    let live = row < rows;  // rows past the end still reach the fold's barriers
    let at = row * cv + lane;
    let is_log = tw_meta[2] == 1u;
{{DECLS}}
    var m = tw_neg_inf();
    var s = vec2<f32>(0.0);
    if (live) {
{{LOADS}}
        if (is_log) {
{{SUM_LOG}}
        } else {
{{SUM}}
        }
    }
    let sd = tw_done(tw_fold(lid, tpr, vec3<f32>(m, s)));
    if (live) {
        if (is_log) {
            let log_s = tw_log(sd.y);
{{STORE_LOG}}
        } else {
            let c = select(tw_rescale(vec3<f32>(m, 1.0, 0.0), sd.x).x / sd.y, tw_nan(), sd.x == tw_neg_inf());
{{STORE}}
        }
    }
}
