    // ARR[OUTER, INNER..INNER+3] of the matrix at element BASE, where rows (and BASE) are whole vec4s; zero outside the matrix
    if ({{OUTER}} < {{OUTER_TOTAL}} && {{INNER}} < {{INNER_TOTAL}}) { return {{ARR}}[({{BASE}} + {{OUTER}} * {{INNER_TOTAL}} + {{INNER}}) / 4u]; }
    return vec4<{{S}}>();
