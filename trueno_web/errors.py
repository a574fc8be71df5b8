"""trueno_web exceptions: every error the library raises is one of these, with a message that says what to do."""


class TruenoError(Exception):
    """Base class of every trueno_web error."""


class TruenoValueError(TruenoError, ValueError):
    """Bad input values or shapes (mismatched lengths, wrong rank, inner dimensions that differ)."""


class TruenoIndexError(TruenoValueError, IndexError):
    """An axis or index out of range (an IndexError too, as the array API standard asks)."""


class TruenoTypeError(TruenoError, TypeError):
    """Input of a type trueno_web cannot use (strings, None, non-numbers)."""


class LimitError(TruenoValueError):
    """The input is larger than a limit of the device; the message names the limit."""


class BatchError(TruenoError, RuntimeError):
    """A command batch used out of order: read before execute, a fused-away buffer, a foreign BufferId."""


class GpuError(TruenoError, RuntimeError):
    """The GPU reported an error (validation, out of memory); the device stays usable."""


class DeviceLostError(GpuError):
    """The GPU device was lost or destroyed; create a new one with `await GpuDevice.create()`."""


class DeviceClosedError(DeviceLostError):
    """The device was closed by `dev.close()` (this program's own call, not a loss); open a new one."""


class UnavailableError(TruenoError, RuntimeError):
    """Something asked for is not available here (no WebGPU adapter, no sync bridge, no NumPy)."""
