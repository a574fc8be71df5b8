    // ORDER (shaders/matmul.wgsl): tiles N fastest, then M
    let row0 = (tile / tw_meta[3]) * BM;
    let col0 = (tile % tw_meta[3]) * BN;
