    // LOCATE for a batch of products (shaders/matmul.wgsl): tile and offsets of this workgroup's product
    let product = rest / tiles;
    let tile = rest - product * tiles;
    // this product's A and B: its index over the batch dimensions, innermost first
    var a_off = 0u;
    var b_off = 0u;
    var left = product;
    for (var d = tw_meta[6]; d > 0u; d = d - 1u) {
        let at = 8u + 3u * d;  // 11 + 3 * (d - 1)
        let size = tw_meta[at];
        let i = left % size;
        left = left / size;
        a_off = a_off + i * tw_meta[at + 1u];
        b_off = b_off + i * tw_meta[at + 2u];
    }
    let c_off = (split * tw_meta[5] + product) * m_total * n_total;
