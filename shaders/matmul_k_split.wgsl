    // SPLIT for K split over workgroups (shaders/matmul.wgsl): this dispatch's slices [lo, lo + slices) of
    // the split's [split * SPAN, (split + 1) * SPAN)
    let per_split = tiles * tw_meta[5];
    let split = linear / max(per_split, 1u);
    if (split >= tw_meta[8] || per_split == 0u) { return; }  // spare workgroups (uniform: no barrier skipped)
    let rest = linear - split * per_split;  // product * tiles + tile
    let lo = split * tw_meta[9] + first;
    let hi = min(split * tw_meta[9] + tw_meta[9], (k_total + BK - 1u) / BK);
    let slices = select(0u, min(hi - lo, SLICES), hi > lo);
