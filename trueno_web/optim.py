"""Optimizers in the style users know (`opt.step(grads)`), on lazy tensors.

An optimizer holds a pytree of parameter tensors and their state (momenta). `await opt.step(grads)`
builds each parameter's update as one elementwise expression (new parameter and new state: one fused
kernel per parameter on a GPU), realises them with any tensors passed along (the loss) in ONE batch, and
rebinds the parameter tensors the caller holds to their new values: nothing is copied back, and buffers
come from the device's pool, so a training loop makes no new allocations after its first steps. The
learning rate and the other scalars reach kernels as parameters, never as WGSL text: a schedule that
changes them every step compiles nothing new.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .autodiff.trees import flatten, unflatten
from .errors import TruenoTypeError, TruenoValueError
from .tensor import Tensor, asarray, realize

__all__ = ["SGD", "Adam", "AdamW", "clip_by_global_norm", "global_norm", "cosine_schedule"]

Schedule = Callable[[int], float]


def _leaves(tree, what: str) -> list[Tensor]:
    return flatten(tree, what, lambda x: isinstance(x, Tensor))[0]


def global_norm(grads) -> Tensor:
    """sqrt(sum of squares of every element of every tensor of `grads`), a 0-d tensor."""
    total = None
    for g in _leaves(grads, "grads"):
        s = (g * g).sum()
        total = s if total is None else total + s
    if total is None:
        raise TruenoValueError("global_norm of no tensors")
    return total.sqrt()


def clip_by_global_norm(grads, max_norm: float):
    """`grads` scaled by min(1, max_norm / global_norm(grads)) (the same structure, lazy)."""
    leaves, structure = flatten(grads, "grads", lambda x: isinstance(x, Tensor))
    norm = global_norm(grads)
    scale = (norm * (1.0 / float(max_norm))).maximum(1.0)
    return unflatten(structure, [g / scale for g in leaves])


def cosine_schedule(peak: float, total_steps: int, warmup: int = 0, end: float = 0.0) -> Schedule:
    """Linear warm-up from 0 to `peak` over `warmup` steps, then a cosine decay to `end` at `total_steps`."""

    def lr(step: int) -> float:
        if step < warmup:
            return peak * (step + 1) / warmup
        t = min(1.0, (step - warmup) / max(1, total_steps - warmup))
        return end + (peak - end) * 0.5 * (1.0 + math.cos(math.pi * t))

    return lr


class Optimizer:
    """The shared loop of the optimizers below; a subclass writes `update(p, g, state, lr) -> (p, state)`."""

    state_names: tuple[str, ...] = ()

    def __init__(self, params, lr: float | Schedule, clip_norm: float | None = None):
        self.params = _leaves(params, "params")
        if not self.params:
            raise TruenoValueError("an optimizer needs at least one parameter tensor")
        if not callable(lr) and (isinstance(lr, bool) or not isinstance(lr, (int, float)) or lr < 0):
            raise TruenoTypeError(f"lr is a non-negative number or a schedule step -> lr, got {lr!r}")
        self.lr = lr
        self.clip_norm = clip_norm
        self.steps = 0
        self.state = [{n: None for n in self.state_names} for _ in self.params]

    def learning_rate(self) -> float:
        """The learning rate of the next step."""
        return float(self.lr(self.steps) if callable(self.lr) else self.lr)

    async def step(self, grads, *also: Tensor) -> None:
        """Apply one update from `grads` (the structure of the parameters), realising it with `also`."""
        gs = _leaves(grads, "grads")
        if len(gs) != len(self.params):
            raise TruenoValueError(f"grads has {len(gs)} tensors for {len(self.params)} parameters")
        for p, g in zip(self.params, gs):
            if p.shape != g.shape:
                raise TruenoValueError(f"a gradient of shape {g.shape} for a parameter of shape {p.shape}")
        if self.clip_norm is not None:
            gs = _leaves(clip_by_global_norm(gs, self.clip_norm), "grads")
        lr = self.learning_rate()
        self.steps += 1
        new = [self.update(p, g, self._state(p, s), lr) for p, g, s in zip(self.params, gs, self.state)]
        outs = [t for p, s in new for t in (p, *s.values())]
        await realize(*outs, *also)
        for param, (p, s), state in zip(self.params, new, self.state):
            param.expr = p.expr  # the caller's tensor now holds the new value
            state.update(s)

    def _state(self, p: Tensor, state: dict) -> dict:
        """The state of `p`, zeros (a broadcast scalar) before the first step."""
        return {n: asarray(0.0, p.device).expand(p.shape) if v is None else v for n, v in state.items()}

    def update(self, p: Tensor, g: Tensor, state: dict, lr: float) -> tuple[Tensor, dict]:
        raise NotImplementedError


class SGD(Optimizer):
    """Stochastic gradient descent as torch.optim.SGD: momentum (no dampening), Nesterov, weight decay
    (L2: added to the gradient)."""

    def __init__(
        self,
        params,
        lr,
        momentum: float = 0.0,
        nesterov: bool = False,
        weight_decay: float = 0.0,
        clip_norm: float | None = None,
    ):
        if nesterov and momentum <= 0:
            raise TruenoValueError("Nesterov momentum needs momentum > 0")
        self.state_names = ("momentum",) if momentum else ()
        super().__init__(params, lr, clip_norm)
        self.momentum, self.nesterov, self.weight_decay = float(momentum), nesterov, float(weight_decay)

    def update(self, p, g, state, lr):
        if self.weight_decay:
            g = g + p * self.weight_decay
        if self.momentum:
            buf = g if self.steps == 1 else state["momentum"] * self.momentum + g
            state = {"momentum": buf}
            g = g + buf * self.momentum if self.nesterov else buf
        return p - g * lr, state


class Adam(Optimizer):
    """Adam (Kingma & Ba) with bias correction, as torch.optim.Adam; `weight_decay` is L2 (added to the
    gradient); AdamW decouples it."""

    state_names = ("m", "v")
    decoupled = False
    default_weight_decay = 0.0

    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float | None = None,
        clip_norm: float | None = None,
    ):
        """`weight_decay` None: the class's default (0 for Adam, 0.01 for AdamW)."""
        super().__init__(params, lr, clip_norm)
        self.b1, self.b2 = (float(b) for b in betas)
        self.eps = float(eps)
        self.weight_decay = float(self.default_weight_decay if weight_decay is None else weight_decay)

    def update(self, p, g, state, lr):
        if self.weight_decay and not self.decoupled:
            g = g + p * self.weight_decay
        m = state["m"] * self.b1 + g * (1.0 - self.b1)
        v = state["v"] * self.b2 + g * g * (1.0 - self.b2)
        step_size = lr / (1.0 - self.b1**self.steps)
        denom = (v * (1.0 / (1.0 - self.b2**self.steps))).sqrt() + self.eps
        if self.weight_decay and self.decoupled:
            p = p * (1.0 - lr * self.weight_decay)
        return p - m / denom * step_size, {"m": m, "v": v}


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW (default 0.01)."""

    decoupled = True
    default_weight_decay = 0.01
