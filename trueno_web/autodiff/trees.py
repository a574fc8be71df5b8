"""Pytrees of tensors (JAX's word): tensors in dicts, lists and tuples, flattened and rebuilt.

The walks are module functions, not nested closures: a recursive closure refers to itself, and that cycle
would keep the leaves it saw (a jitted function's outputs, their device buffers) alive until the next cycle
collection instead of freeing them when the caller drops them.
"""

from __future__ import annotations

from ..errors import TruenoTypeError


def flatten(tree, what: str, is_leaf) -> tuple[list, object]:
    """The leaves of `tree` in order, and its structure for `unflatten` (hashable: nested tuples); a leaf that
    fails `is_leaf` raises TruenoTypeError naming where it is in `what`."""
    leaves: list = []
    return leaves, _walk(tree, "", leaves, what, is_leaf)


def _walk(node, path: str, leaves: list, what: str, is_leaf):
    if isinstance(node, dict):
        return ("dict", tuple((k, _walk(v, f"{path}[{k!r}]", leaves, what, is_leaf)) for k, v in node.items()))
    if isinstance(node, (list, tuple)):
        return (type(node), tuple(_walk(v, f"{path}[{i}]", leaves, what, is_leaf) for i, v in enumerate(node)))
    if not is_leaf(node):
        raise TruenoTypeError(f"{what}{path} is a {type(node).__name__}, not a Tensor")
    leaves.append(node)
    return None


def unflatten(structure, leaves) -> object:
    """The tree of `structure` (from flatten) with `leaves` in its places."""
    return _build(structure, iter(leaves))


def _build(node, it):
    if node is None:
        return next(it)
    kind, children = node
    if kind == "dict":
        return {k: _build(v, it) for k, v in children}
    return kind(_build(v, it) for v in children)
