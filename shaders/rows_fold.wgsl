    {{SHARED}}[lid] = acc{{K}};
    workgroupBarrier();
    for (var stride = tpr >> 1u; stride > 0u; stride = stride >> 1u) {
        if (lane < stride) { {{SHARED}}[lid] = {{COMBINE}}({{SHARED}}[lid], {{SHARED}}[lid + stride * spread]); }
        workgroupBarrier();
    }
    let r{{K}} = {{FINISH}}({{VALUE}}({{SHARED}}[lid - lane * spread]));
    workgroupBarrier();
