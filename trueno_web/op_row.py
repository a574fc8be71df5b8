"""What one row of the op catalog (ops.py) holds, `Op`, and what follows from it: its kind's row, its
inputs, its kernel functions per dtype; `Param`, one scalar parameter."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from . import references as ref
from .dtypes import DTYPES, SHORT, DType, float32, float64
from .kinds import KINDS, Kind, KindRow


@dataclass(frozen=True)
class Param:
    """A scalar parameter of an op; `default=None` means the caller must give it."""

    name: str
    default: float | None = None


@dataclass(frozen=True)
class Op:
    """One op: its kind, WGSL entry, references and tolerances."""

    name: str
    kind: Kind
    wgsl: str  # elementwise: WGSL function; reduce: WGSL load expression of x (and y)
    numpy: Callable
    ref: Callable
    doc: str
    params: tuple[Param, ...] = ()
    rtol: float = 1e-6
    atol: float = 0.0
    aliases: tuple[str, ...] = ()
    input_names: tuple[str, ...] = ()  # the arguments, where they differ from the kind's (dot: a, b)
    combine: str = "tw_add"  # reduce: WGSL function folding two partial results
    identity: str = "0.0"  # reduce: WGSL expression of the fold's identity
    finish: str = ""  # reduce: WGSL function applied to the total
    empty: bool = True  # reduce: has a value on an empty input (the fold's identity); max and min have none
    options: tuple[str, ...] = field(default=())  # non-scalar keyword options (shapes)
    cost: int = 1  # relative work per element on the host (exp/tanh/log ops: 4); `auto` weighs map work by it
    group: str = ""  # "activation": the activation-style one-input ops the demo page plots
    ulp: float = 0.5  # elementwise: the largest error, in ulps of the float32 result (docs/accuracy.md)
    exact: Callable | None = None  # elementwise: float64 reference independent of the kernels (default: numpy)
    widens: bool = True  # op.numpy on float64 copies of float32 data is float32's reference (False: its result
    # depends on the dtype it runs in, as nextafter's steps: references run it on float32 arrays)
    dtypes: tuple[DType, ...] = (float32, float64)  # the dtypes it computes in natively (dtypes.signature picks
    # one); the 64-bit ones only where a backend holds them (the NumPy backend: no kernel sees them)
    returns: str = "same"  # its result's dtype: "same" (the one it computed in), "bool", "index" (int32),
    # "real" (a complex one's components': abs, real, imag), "complex" (of the float it computed in: rdft)
    # or "target" (astype's)

    def function(self, compute: DType, out: DType) -> str:
        """The name of its kernel function (WGSL, and tw_<name> in WASM) computing in `compute`, returning `out`:
        the float32 one is `wgsl`; another dtype's has the dtype's suffix (tw_add_i32); astype names both."""
        if self.returns == "target":
            return f"{self.wgsl}_{SHORT[compute]}_{SHORT[out]}"
        return self.wgsl + compute.suffix

    @cached_property
    def kernel_dtypes(self) -> tuple[DType, ...]:
        """Its dtypes of 32-bit words: those its WGSL and WASM kernels compute in."""
        return tuple(d for d in self.dtypes if d in DTYPES)

    @cached_property  # read on every op call: looked up once
    def row(self) -> KindRow:
        """The row of this op's kind (kinds.KINDS)."""
        return KINDS[self.kind]

    @cached_property
    def inputs(self) -> tuple[str, ...]:
        return self.input_names or self.row.inputs

    @property
    def arity(self) -> int:
        return len(self.inputs)

    @cached_property
    def elementwise(self) -> bool:
        return self.row.elementwise

    @cached_property
    def generator(self) -> bool:
        """A row of GENERATORS: no inputs, made on the device from its element index (tw.random)."""
        return self.row.generator

    @cached_property
    def writes_out(self) -> bool:
        """Does `numpy` take `out=`, an array to write its result into? (the NumPy backend's fused chains)"""
        return "out" in inspect.signature(self.numpy).parameters

    @cached_property
    def numpy_quiet(self) -> Callable:
        """`numpy` for a caller that has NumPy's floating-point warnings off already (ref.Quiet's expression)."""
        return self.numpy.raw if isinstance(self.numpy, ref.Quiet) else self.numpy
