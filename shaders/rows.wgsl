// Row kernel template: reductions along rows fused with the elementwise ops around them (a RowStep).
// kernels/rows.py fills in the BINDINGS (inputs read-only, outputs read-write, index functions of
// strided loads), the per-reduction load functions (REDUCERS) and the BODY: for each reduction, a loop
// over the row that computes its input's chain and folds it, a tree fold in workgroup memory that every
// thread of the row reads back, and the elementwise ops on row values; then a last loop over the row
// that computes and stores the element values something needs afterwards. Where a thread's columns are in
// registers, a sum of squares about a row value (var, layer_norm) folds with the sum of the same elements:
// one tree of the row's moments (functions.wgsl tw_moments_add), no second loop and tree for the squares.
// TPR threads per row (a power of two up to 256), THREADS / TPR rows per workgroup (THREADS 256; DIRECT_ROWS
// where TPR is 1: the fold is the thread's own, no workgroup memory, no barrier), on a grid that may be
// 2-D past 65535 workgroups; rows past the end still reach every barrier. SPREAD: how far apart a row's
// threads are in the workgroup: 1 (a row's threads adjacent: a row's elements adjacent in memory), or
// 256 / TPR (adjacent threads on adjacent rows: a column layout, where adjacent rows are adjacent in memory,
// so a warp's loads are coalesced either way).
// Sums accumulate as compensated float32 pairs (per thread tw_lane_add, folded in tw_pairs with tw_pair_add),
// other reductions in one f32 (tw_shared); BINDINGS declares that workgroup memory where TPR > 1.
// tw_meta: [0] rows, [1] cols, [2] threads per row, [3] spread, [7] 1.0 (tw_one), [8..] scalar parameters as f32 bits, then the views
// of the strided loads.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
{{BINDINGS}}

fn tw_param(i: u32) -> f32 { return bitcast<f32>(tw_meta[8u + i]); }

{{REDUCERS}}

@compute @workgroup_size({{THREADS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    tw_one = bitcast<f32>(tw_meta[7]);
    let rows = tw_meta[0];
    let cols = tw_meta[1];
    let tpr = tw_meta[2];
    let spread = tw_meta[3];
    let lane = (lid / spread) & (tpr - 1u);
    let row = (wid.y * nwg.x + wid.x) * ({{THREADS}}u / tpr) + lid % spread + lid / (spread * tpr) * spread;
    let live = row < rows;
    let at_row = min(row, max(rows, 1u) - 1u);  // row values of rows past the end are never stored
{{BODY}}
}
