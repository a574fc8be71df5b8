"""The Mandelbrot escape count written with tensors, the deep program of bench/deep.py and
bench/browser_deep.py (which writes this file into the page: it imports only trueno_web)."""

import trueno_web as tw


def mandelbrot(cx, cy, zeros, iters: int):
    """The escape count after `iters` iterations at the points (cx, cy), read once at the end."""
    zx, zy, count = zeros, zeros, zeros
    for _ in range(iters):
        zx, zy = zx * zx - zy * zy + cx, 2 * zx * zy + cy
        inside = (zx * zx + zy * zy) <= 4.0
        count = count + inside
        zx, zy = tw.where(inside, zx, 0.0), tw.where(inside, zy, 0.0)
    return count
