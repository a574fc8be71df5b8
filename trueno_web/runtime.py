"""Where are we running, and can async work be driven to completion synchronously here?"""

from __future__ import annotations

import asyncio
import sys

from .errors import UnavailableError

_loop: asyncio.AbstractEventLoop | None = None


def is_browser() -> bool:
    """True under Pyodide (Emscripten)."""
    return sys.platform == "emscripten"


def sync_available() -> bool:
    """Desktop: True. Browser: True only where Pyodide's JSPI `run_sync` works in the current call stack."""
    if not is_browser():
        return True
    try:
        from pyodide.ffi import can_run_sync
    except ImportError:
        return False
    return bool(can_run_sync())


class _Box:
    """Carries a result through JSPI's run_sync untouched (a bare float 2.0 would come back as int 2)."""

    __slots__ = ("value",)


async def _boxed(awaitable) -> _Box:
    box = _Box()
    box.value = await awaitable
    return box


def _refuse(awaitable, message: str):
    """Raise UnavailableError without leaving a never-awaited coroutine behind."""
    close = getattr(awaitable, "close", None)
    if close is not None:
        close()
    raise UnavailableError(message)


def block_on(awaitable):
    """Run an awaitable to completion and return its result (desktop: a private event loop;
    browser: JSPI `run_sync`). Raises UnavailableError where that cannot work."""
    if is_browser():
        if not sync_available():
            _refuse(
                awaitable,
                "block_on needs JSPI stack switching, which is not available in this call stack "
                "(this browser lacks JSPI, or the code was not entered through runPythonAsync); use `await` instead",
            )
        from pyodide.ffi import run_sync

        return run_sync(_boxed(awaitable)).value
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        _refuse(awaitable, "block_on cannot run inside a running event loop (e.g. Jupyter); use `await` instead")
    global _loop
    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    return _loop.run_until_complete(awaitable)
