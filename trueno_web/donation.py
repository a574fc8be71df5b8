"""Donation on a GPU (`tw.jit(donate_argnums=...)`): which output of a traced program may be written into
the buffer of a donated argument, and where that is safe."""

from __future__ import annotations

from .graph import MapStep, Node, RowStep, computes, gathers, storage


def reuse_donated(nodes: list[Node], planned, slots: list[int | None], outs: list[int], donated) -> dict[int, int]:
    """Output node -> index of a donated argument its result may be written into: the first unused one of its
    shape and of 32-bit elements (JAX's matching; a float16 result writes halves of words), where that is safe: every step that reads the argument runs before the step that
    writes the output, or is that step itself, where it reads the argument plainly at the index it writes: a
    fused elementwise step or a row step (the kernel then binds the buffer once, read_write: `inplace` of
    kernels/map.py and kernels/rows.py), and no gather of it reads it whole (at other indices)."""
    writer: dict[int, int] = {}
    reads: dict[int, list[tuple[int, int]]] = {}
    whole: set[tuple[int, int]] = set()  # (storage, step) where a gather reads that storage at computed indices
    for s, step in enumerate(planned.steps):
        for nid in computes(step):
            writer[nid] = s
            for i in nodes[nid].inputs:
                reads.setdefault(storage(nodes, i).id, []).append((s, i))
            if gathers(nodes[nid]):
                whole.add((storage(nodes, nodes[nid].inputs[0]).id, s))
    reuse, used = {}, set()
    for out in dict.fromkeys(outs):
        s = writer.get(out)
        if s is None:
            continue
        step = planned.steps[s]
        through_ok = isinstance(step, (MapStep, RowStep))
        k = next(
            (
                k
                for k in donated
                if k not in used
                and slots[k] is not None
                and nodes[slots[k]].shape == nodes[out].shape
                and nodes[slots[k]].dtype.itemsize == nodes[out].dtype.itemsize == 4  # float16's halves: no
            ),
            None,
        )
        if k is None:
            continue
        arg = slots[k]
        if slots.count(arg) > 1 or arg in outs:
            continue
        seen = reads.get(arg, [])
        here = [i for r, i in seen if r == s]
        if here and not (through_ok and (arg, s) not in whole and all(nodes[i].view is None for i in here)):
            continue
        if all(r <= s for r, _ in seen):
            reuse[out] = k
            used.add(k)
    return reuse
