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

import array
import math
from collections.abc import Callable

from .autodiff import value_and_grad
from .autodiff.trees import flatten, unflatten
from .errors import TruenoTypeError, TruenoValueError
from .programs import jit
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
    """The shared loop of the optimizers below. A subclass writes `update(p, g, state, hyper) -> (p, state)`
    with tensor ops, where `hyper` holds this step's scalars (`scalars()`) as 0-d tensors: the expressions are
    the same every step, so plans and kernels are reused, and `trainer()` can trace them once."""

    state_names: tuple[str, ...] = ()

    def __init__(self, params, lr: float | Schedule, clip_norm: float | None = None):
        self.params, self.structure = flatten(params, "params", lambda x: isinstance(x, Tensor))
        if not self.params:
            raise TruenoValueError("an optimizer needs at least one parameter tensor")
        if not callable(lr) and (isinstance(lr, bool) or not isinstance(lr, (int, float)) or lr < 0):
            raise TruenoTypeError(f"lr is a non-negative number or a schedule step -> lr, got {lr!r}")
        self.lr = lr
        self.clip_norm = clip_norm
        self.steps = 0
        self.state = [
            {n: asarray(0.0, p.device).expand(p.shape) for n in self.state_names} for p in self.params
        ]  # zeros (a broadcast scalar) until the first step writes them

    def learning_rate(self) -> float:
        """The learning rate of the next step."""
        return float(self.lr(self.steps) if callable(self.lr) else self.lr)

    def scalars(self) -> dict[str, float]:
        """The next step's scalars by name (the learning rate; Adam adds its bias corrections)."""
        return {"lr": self.learning_rate()}

    def _hyper(self) -> tuple[Tensor, dict[str, Tensor]]:
        """This step's scalars as one small host array (one upload) and 0-d views of it by name."""
        values = self.scalars()
        packed = asarray(array.array("f", values.values()), self.params[0].device)
        return packed, {name: packed[i] for i, name in enumerate(values)}

    def apply(self, params: list[Tensor], grads: list[Tensor], state: list[dict], hyper: dict) -> tuple[list, list]:
        """The new parameters and state (lazy): clipping, then each parameter's update."""
        if self.clip_norm is not None:
            grads = _leaves(clip_by_global_norm(grads, self.clip_norm), "grads")
        new = [self.update(p, g, s, hyper) for p, g, s in zip(params, grads, state)]
        return [p for p, _ in new], [s for _, s in new]

    def _check(self, grads) -> list[Tensor]:
        gs = _leaves(grads, "grads")
        if len(gs) != len(self.params):
            raise TruenoValueError(f"grads has {len(gs)} tensors for {len(self.params)} parameters")
        for p, g in zip(self.params, gs):
            if p.shape != g.shape:
                raise TruenoValueError(f"a gradient of shape {g.shape} for a parameter of shape {p.shape}")
        return gs

    def _adopt(self, params: list[Tensor], state: list[dict]) -> None:
        """The caller's parameter tensors rebound to their new values; the new state kept."""
        for param, p in zip(self.params, params):
            param.expr = p.expr
        self.state = state
        self.steps += 1

    async def step(self, grads, *also: Tensor) -> None:
        """Apply one update from `grads` (the structure of the parameters), realising it with `also`."""
        gs = self._check(grads)
        _, hyper = self._hyper()
        params, state = self.apply(self.params, gs, self.state, hyper)
        await realize(*params, *(t for s in state for t in s.values()), *also)
        self._adopt(params, state)

    def trainer(self, loss_fn):
        """An async `step(*batch) -> loss` that computes loss_fn(params, *batch), its gradients and this
        optimizer's update, traced once (tw.jit) and replayed: one batch per step, no tracing after the
        first. `loss_fn(params, *batch)` takes the parameters in the structure given to the constructor."""
        loss_and_grads = value_and_grad(loss_fn)

        def whole_step(params, state, hyper, *batch):
            loss, grads = loss_and_grads(unflatten(self.structure, params), *batch)
            names = self.scalars()
            scalars = {name: hyper[i] for i, name in enumerate(names)}
            new_params, new_state = self.apply(params, _leaves(grads, "grads"), state, scalars)
            return loss, new_params, new_state

        traced = jit(whole_step, donate_argnums=(0, 1))  # parameters and state updated in place on a GPU

        async def step(*batch) -> Tensor:
            packed, _ = self._hyper()
            loss, params, state = await traced(self.params, self.state, packed, *batch)
            self._adopt(params, state)
            return loss

        return step

    def update(self, p: Tensor, g: Tensor, state: dict, hyper: dict) -> tuple[Tensor, dict]:
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

    def update(self, p, g, state, hyper):
        if self.weight_decay:
            g = g + p * self.weight_decay
        if self.momentum:  # the buffer starts at 0, so the first step's is g (torch's clone of g)
            buf = state["momentum"] * self.momentum + g
            state = {"momentum": buf}
            g = g + buf * self.momentum if self.nesterov else buf
        return p - g * hyper["lr"], state


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

    def scalars(self) -> dict[str, float]:
        """lr, and for step t: the step size lr / (1 - b1^t), the second moment's bias correction
        1 / (1 - b2^t) and the decoupled decay's factor 1 - lr * weight_decay."""
        lr, t = self.learning_rate(), self.steps + 1
        return {
            "lr": lr,
            "step_size": lr / (1.0 - self.b1**t),
            "v_scale": 1.0 / (1.0 - self.b2**t),
            "decay": 1.0 - lr * self.weight_decay,
        }

    def update(self, p, g, state, hyper):
        if self.weight_decay and not self.decoupled:
            g = g + p * self.weight_decay
        m = state["m"] * self.b1 + g * (1.0 - self.b1)
        v = state["v"] * self.b2 + g * g * (1.0 - self.b2)
        denom = (v * hyper["v_scale"]).sqrt() + self.eps
        if self.weight_decay and self.decoupled:
            p = p * hyper["decay"]
        return p - m / denom * hyper["step_size"], {"m": m, "v": v}


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW (default 0.01)."""

    decoupled = True
    default_weight_decay = 0.01
