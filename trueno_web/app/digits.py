"""The demo page's digit panel: a drawing (pen strokes) -> the 8x8 picture the shipped classifier
(trueno_web.models.Mlp.digits) was trained on. Standard library only: it runs in the page's worker.

How scikit-learn's `load_digits` were made (UCI "optdigits"): NIST's preprocessing normalised each
handwritten digit into a 32x32 binary bitmap, then the on pixels of each non-overlapping 4x4 block
were counted, giving 64 values 0..16. What that normalisation did shows in the data (1797 digits):

- size: every digit's ink spans all 8 rows (all 32 bitmap rows), while its width keeps the digit's
  proportions (a '1' is 3 to 5 blocks wide, a '0' 6), centred: the height was scaled to the box,
  the aspect ratio kept;
- stroke width: every digit has about the same amount of ink whatever its class, 313 of the 1024
  bitmap pixels on average (standard deviation 34; the median '1' has 311, the median '8' 330), so
  a '1' is drawn with a thick pen and an '8' with a thin one.

`pixels_from_strokes` does the same to a drawing: the strokes' bounding box is scaled (aspect kept)
so that the ink, with the pen's radius around the centre line, fills the 32 rows (or the 32 columns
of a drawing wider than tall) and is centred; the pen radius is then chosen (by bisection) so that
`INK` pixels are on; pixels are on where their centre lies within the radius of a stroke; the 4x4
blocks are counted. How big or thick the user drew, and where on the canvas, does not matter.

`strokes_from_pixels` goes the other way, for the tests and the page's "held-out digit" button: a
real 8x8 digit is upsampled to 32x32, thresholded and thinned (Zhang-Suen) to its centre line, which
is traced into strokes a pen (or Playwright's mouse) can draw.
"""

from __future__ import annotations

import math

SIZE = 32  # the bitmap's side
BLOCK = 4  # counted in BLOCK x BLOCK blocks: 8x8 values 0..16
CELLS = SIZE // BLOCK
INK = 313  # on pixels of the 1024 the pen radius aims at (the mean over load_digits)
RADIUS = (0.75, 8.0)  # the pen radius (bitmap pixels) stays in this range

Point = tuple[float, float]


# ---------------------------------------------------------------- drawing -> 8x8


def _clean(strokes) -> list[list[Point]]:
    """Strokes as lists of (x, y): each stroke a flat [x0, y0, x1, y1, ...] or a list of pairs."""
    out = []
    for stroke in strokes or ():
        stroke = list(stroke)
        if stroke and not isinstance(stroke[0], (int, float)):
            pts = [(float(p[0]), float(p[1])) for p in stroke]
        else:
            pts = [(float(stroke[i]), float(stroke[i + 1])) for i in range(0, len(stroke) - 1, 2)]
        pts = [p for p in pts if math.isfinite(p[0]) and math.isfinite(p[1])]
        if pts:
            out.append(pts)
    return out


def normalize(strokes, radius: float) -> list[list[Point]]:
    """Scale and move the strokes into the 32x32 bitmap: the bounding box of their centre lines, grown
    by `radius` on every side, fills the 32 rows (or the 32 columns, if wider than tall), centred."""
    strokes = _clean(strokes)
    xs = [x for s in strokes for x, _ in s]
    ys = [y for s in strokes for _, y in s]
    if not xs:
        return []
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    span = max(x1 - x0, y1 - y0)
    scale = (SIZE - 2 * radius) / span if span > 0 else 1.0
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    out = []
    for s in strokes:
        pts = [(SIZE / 2 + (x - cx) * scale, SIZE / 2 + (y - cy) * scale) for x, y in s]
        kept = [pts[0]]  # drop points closer than a quarter pixel to the last one kept
        for p in pts[1:]:
            if (p[0] - kept[-1][0]) ** 2 + (p[1] - kept[-1][1]) ** 2 >= 0.0625:
                kept.append(p)
        if len(kept) == 1 and len(pts) > 1:
            kept.append(pts[-1])
        out.append(kept)
    return out


def rasterize(strokes: list[list[Point]], radius: float) -> bytearray:
    """The 32x32 binary bitmap (row-major): a pixel is on where its centre is within `radius` of a
    stroke's segment (a one-point stroke is a dot)."""
    bitmap = bytearray(SIZE * SIZE)
    r2 = radius * radius
    for s in strokes:
        segments = list(zip(s, s[1:])) or [(s[0], s[0])]
        for (ax, ay), (bx, by) in segments:
            dx, dy = bx - ax, by - ay
            ll = dx * dx + dy * dy
            lo_x = max(0, math.floor(min(ax, bx) - radius - 0.5))
            hi_x = min(SIZE - 1, math.ceil(max(ax, bx) + radius - 0.5))
            lo_y = max(0, math.floor(min(ay, by) - radius - 0.5))
            hi_y = min(SIZE - 1, math.ceil(max(ay, by) + radius - 0.5))
            for py in range(lo_y, hi_y + 1):
                cy = py + 0.5
                row = py * SIZE
                for px in range(lo_x, hi_x + 1):
                    if bitmap[row + px]:
                        continue
                    cx = px + 0.5
                    t = ((cx - ax) * dx + (cy - ay) * dy) / ll if ll > 0 else 0.0
                    t = 0.0 if t < 0 else 1.0 if t > 1 else t
                    ex, ey = ax + t * dx - cx, ay + t * dy - cy
                    if ex * ex + ey * ey <= r2:
                        bitmap[row + px] = 1
    return bitmap


def downsample(bitmap) -> list[int]:
    """The 32x32 bitmap -> 64 counts (0..16) of the on pixels of each 4x4 block, row-major."""
    out = [0] * (CELLS * CELLS)
    for y in range(SIZE):
        for x in range(SIZE):
            if bitmap[y * SIZE + x]:
                out[(y // BLOCK) * CELLS + x // BLOCK] += 1
    return out


def bitmap_from_strokes(strokes, ink: int = INK) -> tuple[bytearray, float]:
    """(the 32x32 bitmap, the pen radius used): normalized, with the radius (in RADIUS) whose bitmap
    has the on-pixel count closest to `ink` (bisection: more radius, more ink)."""
    if not _clean(strokes):
        return bytearray(SIZE * SIZE), 0.0

    def draw(r):
        bitmap = rasterize(normalize(strokes, r), r)
        return bitmap, sum(bitmap)

    lo, hi = RADIUS
    best = None
    for _ in range(12):
        mid = (lo + hi) / 2
        bitmap, count = draw(mid)
        if best is None or abs(count - ink) < abs(best[2] - ink):
            best = (bitmap, mid, count)
        if count == ink:
            break
        lo, hi = (mid, hi) if count < ink else (lo, mid)
    return best[0], best[1]


def pixels_from_strokes(strokes, ink: int = INK) -> list[int]:
    """A drawing -> the 64 pixels (0..16, row-major 8x8) the classifier takes, as load_digits made them."""
    return downsample(bitmap_from_strokes(strokes, ink)[0])


# ---------------------------------------------------------------- 8x8 -> strokes (tests, examples)


def _upsample(pixels) -> bytearray:
    """8x8 counts -> a 32x32 bitmap: the block coverage (count / 16) interpolated bilinearly between
    block centres, on where it reaches one half."""
    out = bytearray(SIZE * SIZE)

    def at(i, j):
        i, j = min(max(i, 0), CELLS - 1), min(max(j, 0), CELLS - 1)
        return pixels[i * CELLS + j] / 16.0

    for y in range(SIZE):
        fy = (y + 0.5) / BLOCK - 0.5
        i0, ty = math.floor(fy), fy - math.floor(fy)
        for x in range(SIZE):
            fx = (x + 0.5) / BLOCK - 0.5
            j0, tx = math.floor(fx), fx - math.floor(fx)
            v = (at(i0, j0) * (1 - tx) + at(i0, j0 + 1) * tx) * (1 - ty) + (
                at(i0 + 1, j0) * (1 - tx) + at(i0 + 1, j0 + 1) * tx
            ) * ty
            out[y * SIZE + x] = v >= 0.5
    return out


_RING = ((-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1))  # P2..P9, clockwise from north


def thin(bitmap) -> bytearray:
    """Zhang-Suen thinning of a 32x32 bitmap to lines one pixel wide."""
    img = bytearray(bitmap)

    def ring(y, x):
        return [img[(y + dy) * SIZE + x + dx] if 0 <= y + dy < SIZE and 0 <= x + dx < SIZE else 0 for dy, dx in _RING]

    changed = True
    while changed:
        changed = False
        for step in (0, 1):
            drop = []
            for y in range(SIZE):
                for x in range(SIZE):
                    if not img[y * SIZE + x]:
                        continue
                    p = ring(y, x)
                    n = sum(p)
                    turns = sum(p[k] == 0 and p[(k + 1) % 8] == 1 for k in range(8))
                    p2, p4, p6, p8 = p[0], p[2], p[4], p[6]
                    if step == 0:
                        edge = p2 * p4 * p6 == 0 and p4 * p6 * p8 == 0
                    else:
                        edge = p2 * p4 * p8 == 0 and p2 * p6 * p8 == 0
                    if 2 <= n <= 6 and turns == 1 and edge:
                        drop.append(y * SIZE + x)
            for k in drop:
                img[k] = 0
            changed = changed or bool(drop)
    return img


def trace(skeleton) -> list[list[Point]]:
    """A one-pixel-wide bitmap -> strokes through its pixel centres: each 8-neighbour link is drawn
    once; a stroke starts at a line's end where there is one and follows unused links."""
    on = {(y, x) for y in range(SIZE) for x in range(SIZE) if skeleton[y * SIZE + x]}

    def neighbours(p):
        y, x = p
        near = [(y + dy, x + dx) for dy, dx in _RING if (y + dy, x + dx) in on]
        # a diagonal link that two 4-links also join is redundant: drop it
        return [q for q in near if q[0] == y or q[1] == x or ((y, q[1]) not in on and (q[0], x) not in on)]

    links = {p: set(neighbours(p)) for p in on}
    strokes = []
    seen = set()
    while True:
        open_ = [p for p in sorted(links) if links[p]]
        if not open_:
            break
        ends = [p for p in open_ if len(links[p]) == 1]
        p = (ends or open_)[0]
        path = [p]
        while links[p]:
            q = min(links[p])
            links[p].discard(q)
            links[q].discard(p)
            path.append(q)
            p = q
        seen.update(path)
        strokes.append(path)
    strokes += [[p] for p in sorted(on - seen)]  # isolated pixels: dots
    return [[(x + 0.5, y + 0.5) for y, x in path] for path in strokes]


def strokes_from_pixels(pixels) -> list[list[Point]]:
    """A real 8x8 digit (64 values 0..16) -> pen strokes in 32x32 bitmap coordinates that, drawn and
    run through pixels_from_strokes, give back a picture close to it."""
    ink = _upsample(list(pixels))
    strokes = trace(thin(ink))
    return [_extend(_extend(s, ink)[::-1], ink)[::-1] if len(s) > 1 else s for s in strokes]


def _extend(stroke: list[Point], ink, back: int = 3) -> list[Point]:
    """Thinning eats a line's ends (by about its half width): carry the stroke's last point on in the
    direction it came from, while it stays on the ink."""
    (ax, ay), (bx, by) = stroke[max(0, len(stroke) - 1 - back)], stroke[-1]
    d = math.hypot(bx - ax, by - ay)
    if d == 0:
        return stroke
    ux, uy = (bx - ax) / d, (by - ay) / d
    step = 0
    while True:
        x, y = bx + (step + 1) * ux, by + (step + 1) * uy
        if not (0 <= x < SIZE and 0 <= y < SIZE and ink[int(y) * SIZE + int(x)]):
            break
        step += 1
    return stroke + [(bx + step * ux, by + step * uy)] if step else stroke
