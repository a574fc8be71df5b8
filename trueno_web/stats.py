"""Counters that make the batch's promise testable: transfers, dispatches, submits, compiles."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class Stats:
    """What crossed the bus and what ran. On CPU backends transfers stay zero."""

    uploads: int = 0
    downloads: int = 0
    bytes_up: int = 0
    bytes_down: int = 0
    dispatches: int = 0
    submits: int = 0
    pipelines_compiled: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def tally(sinks: tuple[Stats, ...], **counts: int) -> None:
    """Add counts to every sink (a batch's stats and its device's cumulative stats)."""
    for sink in sinks:
        for name, value in counts.items():
            setattr(sink, name, getattr(sink, name) + value)
