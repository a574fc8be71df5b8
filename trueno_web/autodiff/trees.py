"""Pytrees of tensors (JAX's word): tensors in dicts, lists and tuples, flattened and rebuilt."""

from __future__ import annotations

from ..errors import TruenoTypeError


def flatten(tree, what: str, is_leaf) -> tuple[list, object]:
    """The leaves of `tree` in order, and its structure for `unflatten` (hashable: nested tuples); a leaf that
    fails `is_leaf` raises TruenoTypeError naming where it is in `what`."""
    leaves: list = []

    def walk(node, path: str):
        if isinstance(node, dict):
            return ("dict", tuple((k, walk(v, f"{path}[{k!r}]")) for k, v in node.items()))
        if isinstance(node, (list, tuple)):
            return (type(node), tuple(walk(v, f"{path}[{i}]") for i, v in enumerate(node)))
        if not is_leaf(node):
            raise TruenoTypeError(f"{what}{path} is a {type(node).__name__}, not a Tensor")
        leaves.append(node)
        return None

    return leaves, walk(tree, "")


def unflatten(structure, leaves) -> object:
    """The tree of `structure` (from flatten) with `leaves` in its places."""
    it = iter(leaves)

    def build(node):
        if node is None:
            return next(it)
        kind, children = node
        if kind == "dict":
            return {k: build(v) for k, v in children}
        return kind(build(v) for v in children)

    return build(structure)
