    {{SHARED}}[lid] = acc{{K}};
    workgroupBarrier();
    for (var stride = tpr >> 1u; stride > 0u; stride = stride >> 1u) {
        if (lane < stride) { {{SHARED}}[lid] = {{COMBINE}}({{SHARED}}[lid], {{SHARED}}[lid + stride * spread]); }
        workgroupBarrier();
    }
    let v{{K}} = {{SHARED}}[lid - lane * spread];
    let r{{K}} = {{FINISH}}({{VALUE}}(v{{K}}));
    workgroupBarrier();
