    // ORDER (shaders/matmul.wgsl): groups of tw_meta[10] rows of tiles, N fastest within a group
    let group = tw_meta[10];
    let g = tile / (group * tw_meta[3]);
    let rows_in = min(tw_meta[4] - g * group, group);
    let within = tile - g * group * tw_meta[3];
    let row0 = (g * group + within % rows_in) * BM;
    let col0 = (within / rows_in) * BN;
