"""Valid 2-D convolution without kernel flip (shaders/conv2d.wgsl): one thread per output element."""

from __future__ import annotations

from ..graph import Node, OpStep
from .caps import Caps
from .source import WORKGROUP, Dispatch, grid_for, pack_meta, shader


def dispatches(step: OpStep, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    node = nodes[step.node]
    ins = node.inputs
    (h, w), (kh, kw) = nodes[ins[0]].shape, nodes[ins[1]].shape
    oh, ow = node.shape
    groups = -(-(oh * ow) // WORKGROUP)
    return [Dispatch(shader("conv2d"), "main", ((1, ins[0]), (2, ins[1]), (3, node.id)),
                     grid_for(groups, caps.max_per_dim), pack_meta([h, w, kh, kw, oh, ow]))]
