"""collector_paused(): Python's cycle collector off while a big graph is built and planned.

Recording a tensor expression into a batch and planning it allocate a few objects per node and free none
(there are no cycles to find), so a deep program's thousands of nodes would otherwise trigger full
collections that scan every object alive: a fifth of `realize` for a 15,000-node loop (docs/benchmarks.md,
"Deep programs"). Pausing it there is safe: the collector runs again when the block ends.
"""

from __future__ import annotations

import contextlib
import gc


@contextlib.contextmanager
def collector_paused():
    """The block runs with the cycle collector off (as it was after: a caller's own gc.disable() stays)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
