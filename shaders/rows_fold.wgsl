    {{SHARED}}[lid] = acc{{K}};
    workgroupBarrier();
    for (var width = tpr; width > 1u; ) {
        // a tree of fan-in RADIX (kernels/rows.py FOLD_RADIX): each lane below stride folds width / stride values
        let stride = max(width / {{RADIX}}u, 1u);
        let fan = width / stride;
        if (lane < stride) {
            var a = {{SHARED}}[lid];
{{TAKE}}
            {{SHARED}}[lid] = a;
        }
        workgroupBarrier();
        width = stride;
    }
    let v{{K}} = {{SHARED}}[lid - lane * spread];
    let r{{K}} = {{FINISH}}({{VALUE}}(v{{K}}));
    workgroupBarrier();
