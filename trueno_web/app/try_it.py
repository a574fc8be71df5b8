"""The demo page's "try it" cell, its worker side: a user's Python run on the page's device, as a notebook
cell runs it (top-level `await`; the last expression's value shown), with stdout, stderr and pictures
(`trueno_web.display.Picture`, or anything with `_repr_png_`) collected in the order they came, and an error
given as the user's line and a traceback trimmed to the user's code (`File "<try-it>", line N`).

    await run_cell(code, dev, compiling)   # {output: [{kind: "stdout" | "stderr" | "result", text} | {kind: "picture",
                                #  png (base64), width, height}], error: None | {type, message, line,
                                #  traceback}, ms}

Each run starts from a fresh namespace holding `tw` (trueno_web), `dev` (the page's device, also the default
device) and `display(*values)`. `compiling(n)`, where given, hears of the kernels a call waits for on a
webgpu device (n, then 0 once compiled: the page's "compiling N kernels" note). The examples the cell offers (EXAMPLES) are the panels' own code strings,
defined next to what each panel runs. Standard library only: it runs in the page's worker.
"""

from __future__ import annotations

import ast
import base64
import contextlib
import inspect
import linecache
import time
import traceback

import trueno_web as tw

from .. import device as device_module
from .demo_workloads import TRY_ACTIVATIONS, TRY_CHAIN, TRY_FILTERS
from .digit_classifier import TRY_IT as TRY_DIGITS
from .gpt_panel import TRY_IT as TRY_GPT
from .training_panel import TRY_IT as TRY_TRAINING

FILENAME = "<try-it>"

EXAMPLE = """\
# `dev` is the page's device (WebGPU, or the CPU fallback) and `tw` is trueno_web. Edit, then Run (Ctrl+Enter).
x = dev.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
w = dev.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]])
y = (x @ w).softmax(-1)  # lazy: nothing has run yet
print(await y.numpy())  # one batch on the device, read back
print(y.shape, y.dtype, dev.backend)
await x.softmax(-1).numpy()  # the last expression's value is shown too
"""

# name -> (the page's label, the code); the panels' own code strings (see each module)
EXAMPLES = {
    "tensors": ("tensors", EXAMPLE),
    "activations": ("1 · activations", TRY_ACTIVATIONS),
    "filters": ("2 · image filtering", TRY_FILTERS),
    "chain": ("3 · the batch", TRY_CHAIN),
    "digits": ("4 · a digit", TRY_DIGITS),
    "training": ("5 · training", TRY_TRAINING),
    "gpt": ("6 · tiny GPT", TRY_GPT),
}


def examples() -> list[dict]:
    """The examples as the page lists them: [{name, label, code}]."""
    return [{"name": name, "label": label, "code": code} for name, (label, code) in EXAMPLES.items()]


class _Stream:
    """A file-like sink for print(): text appended to the output, joined with the item before of its kind."""

    def __init__(self, output: list, kind: str):
        self.output, self.kind = output, kind

    def write(self, text: str) -> int:
        if text:
            if self.output and self.output[-1]["kind"] == self.kind:
                self.output[-1]["text"] += text
            else:
                self.output.append({"kind": self.kind, "text": text})
        return len(text)

    def flush(self) -> None:
        pass


def _show(output: list, value) -> None:
    """A value as a picture (it has `_repr_png_`) or as its repr; None shows nothing (as in a notebook)."""
    if value is None:
        return
    if hasattr(value, "_repr_png_"):
        png = value._repr_png_()
        png = png if isinstance(png, str) else base64.b64encode(png).decode("ascii")
        output.append({"kind": "picture", "png": png, "width": value.width, "height": value.height})
    else:
        output.append({"kind": "result", "text": repr(value)})


def _error(e: BaseException) -> dict:
    """The error as the user should see it: the user's frames only, and the user's line."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == FILENAME]
    line = frames[-1].lineno if frames else None
    if isinstance(e, SyntaxError) and e.filename == FILENAME:
        line = e.lineno
    text = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(e), e))
    return {
        "type": type(e).__name__,
        "message": str(e),
        "line": line,
        "traceback": ("Traceback (most recent call last):\n" + text) if frames else text,
    }


async def _run(code_object, namespace: dict):
    """eval, awaited where the code has a top-level await."""
    result = eval(code_object, namespace)
    return await result if code_object.co_flags & inspect.CO_COROUTINE else result


async def run_cell(code: str, dev, compiling=None) -> dict:
    """Run `code` on `dev` (see the module's docstring for what comes back and `compiling`)."""
    output: list = []
    executor = dev.executor if dev.backend == "webgpu" else None  # a GpuExecutor: its on_compile

    def display(*values) -> None:
        """Show each value now (a picture, or its repr), as the last expression's value is shown."""
        for value in values:
            _show(output, value)

    namespace = {"__name__": "__main__", "tw": tw, "dev": dev, "display": display}
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)  # the traceback's lines
    device_module.set_default_device(dev)
    error = None
    t0 = time.perf_counter()
    if executor is not None:
        executor.on_compile = compiling
    try:
        with (
            contextlib.redirect_stdout(_Stream(output, "stdout")),
            contextlib.redirect_stderr(_Stream(output, "stderr")),
        ):
            tree = ast.parse(code, FILENAME)
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            await _run(compile(tree, FILENAME, "exec", flags=flags), namespace)
            if last is not None:
                expression = ast.Expression(last.value)
                _show(output, await _run(compile(expression, FILENAME, "eval", flags=flags), namespace))
    except (Exception, SystemExit) as e:  # the user's mistake: shown, and the page goes on
        error = _error(e)
    finally:
        if executor is not None:
            executor.on_compile = None
    return {"output": output, "error": error, "ms": (time.perf_counter() - t0) * 1e3, "backend": dev.backend}
