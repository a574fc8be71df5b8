"""WGSL for each plan step, from the shader set in `shaders/` and the op catalog: one generator per
kernel template (map, rows, reduce, softmax, matmul, conv, scan, scatter, sort, attention), looked up by the template of the step's kind.

A kernel's text depends only on the structure of its step (which functions, which operands), on the
alignment case (vec4 or scalar access) and on the adapter's capabilities (`Caps`), never on scalar
values or sizes: those travel in the `tw_meta` buffer. So the pipeline cache stays small and no user
value can make an invalid shader.

Memory layout the kernels rely on: every buffer the executor binds covers the array rounded up to 16
bytes (the buffer pool's buffers always have that room), so elementwise and reduction kernels read
and write whole vec4s; lanes past the element count touch only that padding (reductions fold the
identity for them).
"""

from __future__ import annotations

from ..graph import Node, Step, template
from . import attention, conv, matmul, reduce, rows, scan, scatter, softmax, sort
from . import map as map_kernel
from .caps import Caps, round16
from .matmul import CONFIGS as MATMUL_CONFIGS
from .matmul import matmul_config
from .source import Dispatch

#: kernel template -> the generator of its dispatches (kinds.KindRow.template names the template)
TEMPLATES = {
    "map": map_kernel.dispatches,
    "reduce": reduce.dispatches,
    "rows": rows.dispatches,
    "softmax": softmax.dispatches,
    "matmul": matmul.dispatches,
    "conv2d": conv.dispatches,
    "scan": scan.dispatches,
    "scatter": scatter.dispatches,
    "sort": sort.dispatches,
    "search": sort.search_dispatches,
    "attention": attention.dispatches,
}

__all__ = ["Caps", "Dispatch", "MATMUL_CONFIGS", "TEMPLATES", "dispatches", "matmul_config", "round16"]


def dispatches(step: Step, nodes: list[Node], caps: Caps) -> list[Dispatch]:
    """The dispatches that compute one plan step."""
    return TEMPLATES[template(step, nodes)](step, nodes, caps)
