"""trueno_web.display: grayscale PNGs from the standard library, decoded here with zlib."""

from __future__ import annotations

import array
import base64
import struct
import zlib

import pytest

from trueno_web.display import Picture, png, side_by_side


def decode(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows) of an 8-bit grayscale PNG with filter-0 rows; every CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header, tags = 8, b"", None, []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        tag, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        assert zlib.crc32(tag + body) == struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0]
        tags.append(tag)
        if tag == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + length
    assert tags[0] == b"IHDR" and tags[-1] == b"IEND"
    w, h, depth, color, _c, _f, interlace = header
    assert (depth, color, interlace) == (8, 0, 0)
    raw = zlib.decompress(idat)
    rows = [raw[r * (w + 1) : (r + 1) * (w + 1)] for r in range(h)]
    assert len(raw) == h * (w + 1) and all(row[0] == 0 for row in rows)
    return w, h, [row[1:] for row in rows]


def test_values_become_gray_levels_clipped_to_lo_hi():
    w, h, rows = decode(png([0.0, 0.5, 1.0, -3.0, 7.0, float("nan")], 3, 2))
    assert (w, h) == (3, 2)
    assert rows == [bytes([0, 128, 255]), bytes([0, 255, 0])]
    assert decode(png([-1.0, 0.0, 1.0], 3, 1, lo=-1.0, hi=1.0))[2] == [bytes([0, 128, 255])]


def test_scale_repeats_each_pixel():
    w, h, rows = decode(png(array.array("f", [0.0, 1.0]), 2, 1, scale=3))
    assert (w, h) == (6, 3)
    assert rows == [bytes([0, 0, 0, 255, 255, 255])] * 3


def test_nested_lists_and_wrong_sizes():
    assert decode(png([[0.0, 1.0], [1.0, 0.0]], 2, 2))[2] == [bytes([0, 255]), bytes([255, 0])]
    with pytest.raises(ValueError, match="2x2 needs 4 values, got 3"):
        png([0.0, 1.0, 0.5], 2, 2)
    with pytest.raises(ValueError, match="hi must be above lo"):
        png([0.0], 1, 1, lo=1.0, hi=1.0)


def test_side_by_side_centres_panels_on_the_background():
    values, w, h = side_by_side([([0.0] * 4, 2, 2), ([0.5], 1, 1)], gap=1)
    assert (w, h) == (4, 2)
    assert values == [0.0, 0.0, 1.0, 0.5, 0.0, 0.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="2x2 panel needs 4 values"):
        side_by_side([([0.0] * 3, 2, 2)])


def test_a_picture_shows_inline_in_jupyter():
    pic = Picture.row([([0.0] * 16, 4, 4), ([1.0] * 4, 2, 2)], gap=2, scale=2)
    assert base64.b64decode(pic._repr_png_()) == pic.png
    w, h, rows = decode(pic.png)
    assert (w, h) == (2 * (4 + 2 + 2), 2 * 4)
    assert rows[0][:8] == bytes(8) and rows[0][8:] == bytes([255] * 8)  # the gap and the white panel
    assert repr(pic) == f"<Picture 8x4 x2: {len(pic.png)} bytes of PNG>"
