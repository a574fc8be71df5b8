    // LOCATE for one product (shaders/matmul.wgsl): the tile, A and B at offset 0, C after the earlier splits'
    let tile = rest;
    let a_off = 0u;
    let b_off = 0u;
    let c_off = split * m_total * n_total;
