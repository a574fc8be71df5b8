// C(M,N) = A(M,K) @ B(K,N), row-major, of S: f32, or i32 / u32 (exact, wrapping). Register-blocked, with a template that kernels.py fills in
// (kernels.matmul_source) for a tile configuration and an alignment case:
//   a workgroup of TX*TY threads computes a BM x BN tile of C from BK-deep slices of A and B staged in
//   workgroup memory, two slices deep (the next slice's global loads are in flight while this one is
//   multiplied: one barrier per slice); each thread keeps TM x TN results in registers as vec4 rows,
//   rows (ty + i*TY)*4 + r and columns (tx + j*TX)*4 + c, so a warp reads a few broadcast vec4s of A
//   and consecutive vec4s of B from workgroup memory (PLACE: a warp's threads as a block of tx x ty).
//   A is read as vec4 along K when K % 4 == 0, B as vec4 along N when N % 4 == 0, C written as vec4 along N
//   when N % 4 == 0; an operand given as its transpose (the kind's ta, tb: A^T is (K, M), B^T is (N, K),
//   read in place) as vec4 along its own rows (M, K) when those are whole vec4s; otherwise the same tiles
//   are filled by scalar loads. Edges are zero-filled on load and masked on
//   store: any M, K, N, and tiles fully inside the matrices take the same path at full speed.
// A batch of products C[i] = A[i] @ B[i] runs in the same dispatch: C's are consecutive (M*N apart), and
// product i reads A and B at element offsets from the batch dimensions' strides (0 where an operand is
// broadcast: one matrix serves the whole dimension). A 2-D product is a batch of one.
// Split K over workgroups (SPLIT: shaders/matmul_k_split.wgsl, else matmul_k_whole.wgsl): with S splits,
// split s multiplies slices [s*SPAN, (s+1)*SPAN) of K and stores its partial C at s * (batch * M * N) of
// the binding `c` (then the executor's scratch); shaders/matmul_sum.wgsl adds the S partials into C in a
// second dispatch. A K loop within the loop budget runs in one dispatch, and the kernel then has no word
// 7 (FIRST is 0u): the 4096^3 product on the H100 took 6.06 ms with it read, 4.47 without. ORDER places
// the tile: shaders/matmul_order_rows.wgsl (N fastest, then M) or matmul_order_groups.wgsl (N fastest
// within groups of rows of tiles, for L2 reuse).
// tw_meta: [0] M, [1] K, [2] N, [3] tiles along N, [4] tiles along M, [5] products in the batch,
// [6] batch dimensions D, [7] this dispatch's first BK-slice of K (within its split), [8] splits S,
// [9] SPAN (slices of K per split), [10] rows of tiles per group of the tile order, then per batch
// dimension, outermost first: size, A stride, B stride (elements), then an epilogue's words.
// OUT declares C (binding 3), or an epilogue (kernels/matmul.py `epilogue`): the elementwise chain that reads
// the product, `tw_out(i, v)` storing what it computes at element (or vec4) i of C, bindings 3 on.
// Bounded loops: a dispatch runs SLICES slices of K at most (kernels/matmul.py sets it from the adapter's
// loop budget, less the D trips of LOCATE's loop), so a longer split takes several dispatches; each one
// after the first adds its partial products to what the ones before stored. Workgroups run tiles in a
// linear order: tiles, then the batch, then the split, on a grid that may be 2-D past 65535. LOCATE finds
// the workgroup's tile and its product's offsets: shaders/matmul_batch.wgsl, or for a single product (no
// batch) shaders/matmul_one.wgsl, whose A and B offsets are constant 0 (so a 2-D product compiles to the
// kernel it was before batches).

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<{{A_TYPE}}>;
@group(0) @binding(2) var<storage, read> b: array<{{B_TYPE}}>;
{{OUT}}

const BM: u32 = {{BM}}u;
const BN: u32 = {{BN}}u;
const BK: u32 = {{BK}}u;
const SLICES: u32 = {{SLICES}}u;  // BK-slices of K per dispatch at most
const TX: u32 = {{TX}}u;          // threads along N: BN / TN
const THREADS: u32 = {{THREADS}}u;
const SA: u32 = BM / 4u + {{SA_PAD}}u;  // vec4 stride of one k row of the A tile (+1 where it fits, else its columns
// swizzled by k row where a thread takes 8 rows (kernels/matmul.py): fewer bank conflicts)
const SB: u32 = BN / 4u;
const A_STAGE: u32 = BK * SA;
const B_STAGE: u32 = BK * SB;

var<workgroup> a_tile: array<vec4<{{S}}>, {{A_TILE}}>;  // [stage][k][m / 4], A transposed
var<workgroup> b_tile: array<vec4<{{S}}>, {{B_TILE}}>;  // [stage][k][n / 4]

fn load_a(off: u32, row: u32, k: u32, m_total: u32, k_total: u32) -> vec4<{{S}}> {
    // A[row, k..k+3] of the matrix at element `off`, zero outside the matrix
{{LOAD_A}}
}

fn load_b(off: u32, k: u32, col: u32, k_total: u32, n_total: u32) -> vec4<{{S}}> {
    // B[k, col..col+3] of the matrix at element `off`, zero outside the matrix
{{LOAD_B}}
}

@compute @workgroup_size({{THREADS}})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
{{SIZES}}
    let first = {{FIRST}};  // this dispatch's first slice of its split (0u: the whole split in one dispatch)
{{SPLIT}}
{{LOCATE}}
{{ORDER}}
{{PLACE}}
{{ACC_DECL}}

    // slice 0 -> stage 0
{{FETCH}}
{{STASH}}
    workgroupBarrier();

    // the loop's body is one block, with no branch around the next slice's loads and stash (the compiler then
    // schedules them with the multiply-adds: faster, docs/benchmarks.md): on the last trip they fetch past the
    // split (zero past K, guarded) into the stage no one reads again
    for (var t = 0u; t < slices; t = t + 1u) {
        let cur = (t & 1u);
        {
            let k0 = (lo + t + 1u) * BK;
{{FETCH_NEXT}}
        }
        let a_base = cur * A_STAGE;
        let b_base = cur * B_STAGE;
{{COMPUTE}}
        {
            let stage = 1u - cur;
{{STASH_NEXT}}
        }
        workgroupBarrier();
    }

{{STORE}}
}
