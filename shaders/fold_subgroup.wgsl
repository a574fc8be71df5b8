// reduce.wgsl's workgroup fold where the adapter has subgroups: a butterfly within each subgroup, then
// one value per subgroup through workgroup memory (the total is valid on lid 0).
fn tw_fold(lid: u32, value: {{ACC}}, sg_size: u32) -> {{ACC}} {
    var v = value;
    for (var o = sg_size >> 1u; o > 0u; o = o >> 1u) { v = {{COMBINE}}(v, subgroupShuffleXor(v, o)); }
    if (lid % sg_size == 0u) { tw_shared[lid / sg_size] = v; }
    workgroupBarrier();
    var total: {{ACC}} = {{LIFT}}({{IDENTITY}});
    if (lid == 0u) {
        for (var j = 0u; j < 256u / sg_size; j = j + 1u) { total = {{COMBINE}}(total, tw_shared[j]); }
    }
    return total;
}
