    // ARR[OUTER, INNER..INNER+3] of the matrix at element BASE, by four guarded scalar loads; zero outside the matrix
    var v = vec4<{{S}}>();
    if ({{OUTER}} < {{OUTER_TOTAL}}) {
        let base = {{BASE}} + {{OUTER}} * {{INNER_TOTAL}};
        if ({{INNER}} < {{INNER_TOTAL}}) { v.x = {{ARR}}[base + {{INNER}}]; }
        if ({{INNER}} + 1u < {{INNER_TOTAL}}) { v.y = {{ARR}}[base + {{INNER}} + 1u]; }
        if ({{INNER}} + 2u < {{INNER_TOTAL}}) { v.z = {{ARR}}[base + {{INNER}} + 2u]; }
        if ({{INNER}} + 3u < {{INNER_TOTAL}}) { v.w = {{ARR}}[base + {{INNER}} + 3u]; }
    }
    return v;
