    // LOCATE for a batch of products (shaders/matmul.wgsl): tile and offsets of this workgroup's product
    let tiles = tw_meta[3] * tw_meta[4];  // per product
    let linear = wid.y * nwg.x + wid.x;
    if (linear >= tiles * tw_meta[5]) { return; }  // the grid's spare workgroups (uniform: no barrier skipped)
    let product = linear / tiles;
    let tile = linear - product * tiles;
    // this product's A and B: its index over the batch dimensions, innermost first
    var a_off = 0u;
    var b_off = 0u;
    var rest = product;
    for (var d = tw_meta[6]; d > 0u; d = d - 1u) {
        let at = 5u + 3u * d;  // 8 + 3 * (d - 1)
        let size = tw_meta[at];
        let i = rest % size;
        rest = rest / size;
        a_off = a_off + i * tw_meta[at + 1u];
        b_off = b_off + i * tw_meta[at + 2u];
    }
    let c_off = product * m_total * n_total;
