"""Valid 2-D convolution without kernel flip (shaders/conv2d.wgsl): one thread per output element, a kernel
of more taps than the loop budget allows split over several dispatches that add up their partial sums."""

from __future__ import annotations

from ..graph import Node, OpStep
from .caps import Caps
from .source import WORKGROUP, Dispatch, fill, grid_for, pack_meta, shader


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    ins = node.inputs
    (h, w), (kh, kw) = nodes[ins[0]].shape, nodes[ins[1]].shape
    oh, ow = node.shape
    grid = grid_for(-(-(oh * ow) // WORKGROUP), caps.max_per_dim)
    source = fill(shader("conv2d"), TAPS=caps.loop_trips)
    return [
        Dispatch(
            source, "main", ((1, ins[0]), (2, ins[1]), (3, node.id)), grid, pack_meta([h, w, kh, kw, oh, ow, first])
        )
        for first in range(0, max(kh * kw, 1), caps.loop_trips)
    ]
