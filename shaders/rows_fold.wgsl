    tw_shared[lid] = acc{{K}};
    workgroupBarrier();
    for (var stride = tpr >> 1u; stride > 0u; stride = stride >> 1u) {
        if (lane < stride) { tw_shared[lid] = {{COMBINE}}(tw_shared[lid], tw_shared[lid + stride]); }
        workgroupBarrier();
    }
    let r{{K}} = {{FINISH}}(tw_shared[lid - lane]);
    workgroupBarrier();
