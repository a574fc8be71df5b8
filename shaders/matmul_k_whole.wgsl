    // SPLIT for one split of K (shaders/matmul.wgsl): this dispatch's slices [lo, lo + slices)
    let split = 0u;
    if (linear >= tiles * tw_meta[5]) { return; }  // the grid's spare workgroups (uniform: no barrier skipped)
    let rest = linear;  // product * tiles + tile
    let lo = first;
    let slices = min((k_total + BK - 1u) / BK - lo, SLICES);
