// C(M,N) = A(M,K) @ B(K,N) (A stored as (K,M) or B as (N,K) read in place where DECL, STEP4 and STEP1 say so),
// of S (f32; i32 and u32 wrap), with no workgroup memory and no barrier:
// the matmul of software adapters (kernels/matmul_direct.py fills the template in). A CPU rasterizer runs a
// workgroup's invocations as SIMD lanes, one group of lanes after another on one core, so a barrier costs a
// switch of every group's context, and workgroup memory is the same cache as global memory: each thread here
// reads its operands straight from the buffers. A thread keeps TM rows x TN columns of C in registers: rows row
// .. row + TM - 1, columns col + j * TX, so that neighbouring threads (the lanes of one SIMD group) read
// neighbouring floats of B and store neighbouring floats of C, and share their rows of A. K is walked four at a
// time (a vec4 of each A row where K % 4 == 0, else four scalars; four rows of B, `kb` the first's offset), then
// the last K % 4 one at a time. Rows and columns past the edges read a clamped index (always in bounds, no
// branch in the loop) and are not stored. Workgroups of TX x TY threads cover BM x BN tiles of C; a batch of
// products runs in the same dispatch, located as in shaders/matmul.wgsl (LOCATE: shaders/matmul_batch.wgsl or
// matmul_one.wgsl; ORDER: matmul_order_rows.wgsl), with its tw_meta words. Loop trips: K / 4 + 3 (plus the
// batch's dimensions): kernels/matmul_direct.py keeps them within the loop budget.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<{{A_TYPE}}>;
@group(0) @binding(2) var<storage, read> b: array<{{S}}>;
{{OUT}}

const BM: u32 = {{BM}}u;  // rows of C per workgroup: TY threads of TM rows
const BN: u32 = {{BN}}u;  // columns of C per workgroup: TX threads of TN columns, TX apart
const TX: u32 = {{TX}}u;

@compute @workgroup_size({{THREADS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
{{SIZES}}
    if (linear >= tiles * tw_meta[5]) { return; }  // the grid's spare workgroups
    let rest = linear;  // product * tiles + tile
    let split = 0u;
{{LOCATE}}
{{ORDER}}
    let row = row0 + (lid / TX) * {{TM}}u;
    let col = col0 + lid % TX;
{{DECL}}
    let n1 = n_total;
    let n2 = 2u * n_total;
    let n3 = 3u * n_total;
    var kb = 0u;
    let k4 = k_total - k_total % 4u;
    for (var k = 0u; k < k4; k = k + 4u) {
{{STEP4}}
        kb = kb + 4u * n_total;
    }
    for (var k = k4; k < k_total; k = k + 1u) {
{{STEP1}}
        kb = kb + n_total;
    }
{{STORE}}
}
