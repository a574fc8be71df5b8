    // LOCATE for one product (shaders/matmul.wgsl): the tile, offsets 0
    let tile = wid.y * nwg.x + wid.x;
    if (tile >= tw_meta[3] * tw_meta[4]) { return; }  // the grid's spare workgroups (uniform: no barrier skipped)
    let a_off = 0u;
    let b_off = 0u;
    let c_off = 0u;
