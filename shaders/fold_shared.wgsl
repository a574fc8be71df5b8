// reduce.wgsl's workgroup fold: a tree in workgroup memory (every adapter). COMBINE is the op's fold.
fn tw_fold(lid: u32, value: {{ACC}}) -> {{ACC}} {
    tw_shared[lid] = value;
    workgroupBarrier();
    for (var stride = 128u; stride > 0u; stride = stride >> 1u) {
        if (lid < stride) { tw_shared[lid] = {{COMBINE}}(tw_shared[lid], tw_shared[lid + stride]); }
        workgroupBarrier();
    }
    return tw_shared[0];
}
