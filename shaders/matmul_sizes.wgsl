    // the product's sizes and this workgroup's place on the grid (shaders/matmul.wgsl's tw_meta words 0-4)
    let m_total = tw_meta[0];
    let k_total = tw_meta[1];
    let n_total = tw_meta[2];
    let tiles = tw_meta[3] * tw_meta[4];  // per product
    let linear = wid.y * nwg.x + wid.x;
