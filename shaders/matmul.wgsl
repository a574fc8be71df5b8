// C(M,N) = A(M,K) @ B(K,N), row-major. Register-blocked: a workgroup computes a 64x64 tile of C from
// 16-wide K slices staged in workgroup memory; each of its 256 threads keeps a 4x4 block of C in
// registers (rows ty + 16 i, columns tx + 16 j, so neighbouring threads touch neighbouring words).
// Edges are zero-filled on load and masked on store: any M, K, N. tw_meta: [0] M, [1] K, [2] N.

@group(0) @binding(0) var<storage, read> tw_meta: array<u32>;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 16u;

var<workgroup> a_tile: array<f32, 1024>;  // [BK][BM], transposed so a thread's 4 rows are strided by 16
var<workgroup> b_tile: array<f32, 1024>;  // [BK][BN]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>,
        @builtin(local_invocation_index) flat: u32) {
    let m_total = tw_meta[0];
    let k_total = tw_meta[1];
    let n_total = tw_meta[2];
    let row0 = wid.y * BM;
    let col0 = wid.x * BN;
    var acc: array<f32, 16>;
    for (var i = 0u; i < 16u; i = i + 1u) { acc[i] = 0.0; }

    for (var k0 = 0u; k0 < k_total; k0 = k0 + BK) {
        for (var l = 0u; l < 4u; l = l + 1u) {
            let idx = flat + l * 256u;
            // A tile: 64 rows x 16 k, read along k (contiguous in A)
            let am = idx / BK;
            let ak = idx % BK;
            var av: f32 = 0.0;
            if (row0 + am < m_total && k0 + ak < k_total) { av = a[(row0 + am) * k_total + k0 + ak]; }
            a_tile[ak * BM + am] = av;
            // B tile: 16 k x 64 columns, read along n (contiguous in B)
            let bk = idx / BN;
            let bn = idx % BN;
            var bv: f32 = 0.0;
            if (k0 + bk < k_total && col0 + bn < n_total) { bv = b[(k0 + bk) * n_total + col0 + bn]; }
            b_tile[bk * BN + bn] = bv;
        }
        workgroupBarrier();
        for (var k = 0u; k < BK; k = k + 1u) {
            var av: array<f32, 4>;
            var bv: array<f32, 4>;
            for (var i = 0u; i < 4u; i = i + 1u) {
                av[i] = a_tile[k * BM + lid.y + 16u * i];
                bv[i] = b_tile[k * BN + lid.x + 16u * i];
            }
            for (var i = 0u; i < 4u; i = i + 1u) {
                for (var j = 0u; j < 4u; j = j + 1u) {
                    acc[i * 4u + j] = fma(av[i], bv[j], acc[i * 4u + j]);
                }
            }
        }
        workgroupBarrier();
    }

    for (var i = 0u; i < 4u; i = i + 1u) {
        let row = row0 + lid.y + 16u * i;
        for (var j = 0u; j < 4u; j = j + 1u) {
            let col = col0 + lid.x + 16u * j;
            if (row < m_total && col < n_total) { c[row * n_total + col] = acc[i * 4u + j]; }
        }
    }
}
