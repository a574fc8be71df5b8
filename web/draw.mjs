// Drawing helpers the demo page's modules share (app.mjs, training.mjs): plain DOM and the 2-D canvas API.

export const $ = (sel) => document.querySelector(sel);

export const COLORS = { gpu: "#3b82f6", cpu: "#f97316", axis: "#94a3b8", grid: "#e2e8f0", text: "#334155", diff: "#7c3aed" };

// A number with `sig` significant digits (exponent form for very large or small magnitudes).
export function fmt(v, sig = 4) {
  if (v === null || v === undefined || Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e7 || a < 1e-3) return v.toExponential(Math.max(0, sig - 1));
  return Number(v.toPrecision(sig)).toString();
}

export const ms = (v) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + " ms";

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "data") Object.entries(v).forEach(([dk, dv]) => { e.dataset[dk] = dv; });
    else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

// A canvas sized in CSS pixels, drawn at the device pixel ratio.
export function context2d(canvas, cssWidth, cssHeight) {
  const dpr = Math.max(1, Math.min(2, window.devicePixelRatio || 1));
  canvas.style.width = cssWidth + "px";
  canvas.style.height = cssHeight + "px";
  canvas.width = Math.round(cssWidth * dpr);
  canvas.height = Math.round(cssHeight * dpr);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, cssWidth, cssHeight);
  return ctx;
}

export function niceTicks(lo, hi, count) {
  const raw = (hi - lo) / count;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi; v += step) out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  return out;
}

// A polyline through (xs[i], ys[i]) in data units (sx, sy map them to pixels); a gap where y is not finite.
export function plotCurve(ctx, xs, ys, sx, sy, color, width, dash) {
  ctx.save();
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.setLineDash(dash);
  ctx.beginPath();
  let pen = false;
  for (let i = 0; i < xs.length; i++) {
    const y = ys[i];
    if (!Number.isFinite(y)) { pen = false; continue; }
    if (pen) ctx.lineTo(sx(xs[i]), sy(y)); else ctx.moveTo(sx(xs[i]), sy(y));
    pen = true;
  }
  ctx.stroke();
  ctx.restore();
}
