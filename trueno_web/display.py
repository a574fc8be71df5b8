"""Pictures of results in a notebook, without NumPy or matplotlib: grayscale PNGs from the standard library.

    from trueno_web.display import Picture
    Picture(values, width, height, scale=2)                       # Jupyter shows it inline
    Picture.row([(img, 96, 96), (blurred, 92, 92)], gap=4)       # panels side by side
    Picture(...).png                                              # the PNG bytes

Values are row-major (a flat sequence, an array.array, a NumPy array or a nested list); `lo` is black,
`hi` white, anything outside is clipped (NaN is black).
"""

from __future__ import annotations

import base64
import struct
import zlib


def _flat(values) -> list[float]:
    if hasattr(values, "ravel"):
        values = values.ravel().tolist()
    out = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out.extend(float(t) for t in v)
        else:
            out.append(float(v))
    return out


def _chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def png(values, width: int, height: int, *, scale: int = 1, lo: float = 0.0, hi: float = 1.0) -> bytes:
    """An 8-bit grayscale PNG of width x height values, each drawn as scale x scale pixels."""
    pixels = _flat(values)
    if len(pixels) != width * height:
        raise ValueError(f"{width}x{height} needs {width * height} values, got {len(pixels)}")
    if not hi > lo:
        raise ValueError(f"hi must be above lo, got lo={lo}, hi={hi}")
    span = 255.0 / (hi - lo)
    rows = []
    for r in range(height):
        line = bytes(
            max(0, min(255, round((v - lo) * span))) if v == v else 0
            for v in pixels[r * width : (r + 1) * width]
            for _ in range(scale)
        )
        rows += [b"\x00" + line] * scale
    header = struct.pack(">IIBBBBB", width * scale, height * scale, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + _chunk(b"IEND", b"")
    )


def side_by_side(panels, gap: int = 4, background: float = 1.0) -> tuple[list[float], int, int]:
    """Panels (values, width, height) on one strip, vertically centred, `gap` columns of background
    between them: (values, width, height)."""
    panels = [(_flat(v), w, h) for v, w, h in panels]
    height = max(h for _v, _w, h in panels)
    width = sum(w for _v, w, _h in panels) + gap * (len(panels) - 1)
    out = [background] * (width * height)
    x0 = 0
    for values, w, h in panels:
        if len(values) != w * h:
            raise ValueError(f"a {w}x{h} panel needs {w * h} values, got {len(values)}")
        y0 = (height - h) // 2
        for r in range(h):
            out[(y0 + r) * width + x0 : (y0 + r) * width + x0 + w] = values[r * w : (r + 1) * w]
        x0 += w + gap
    return out, width, height


class Picture:
    """A grayscale picture that Jupyter shows inline (`_repr_png_`); `.png` is its PNG file."""

    def __init__(self, values, width: int, height: int, *, scale: int = 2, lo: float = 0.0, hi: float = 1.0):
        self.width, self.height, self.scale = width, height, scale
        self.png = png(values, width, height, scale=scale, lo=lo, hi=hi)

    @classmethod
    def row(
        cls, panels, *, gap: int = 4, scale: int = 2, lo: float = 0.0, hi: float = 1.0, background: float | None = None
    ) -> Picture:
        """Panels (values, width, height) side by side (see side_by_side; background: hi, white)."""
        values, width, height = side_by_side(panels, gap, hi if background is None else background)
        return cls(values, width, height, scale=scale, lo=lo, hi=hi)

    def _repr_png_(self) -> str:
        """Base64, as IPython's own Image gives it (a kernel that does not encode bytes, such as
        JupyterLite's, would otherwise send a broken data: URL)."""
        return base64.b64encode(self.png).decode("ascii")

    def __repr__(self) -> str:
        return f"<Picture {self.width}x{self.height} x{self.scale}: {len(self.png)} bytes of PNG>"
