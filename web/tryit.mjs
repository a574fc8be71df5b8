// The demo page's "try it" cell (panel 7): a plain <textarea> editor (Tab indents, Shift+Tab unindents,
// Ctrl/Cmd+Enter runs), the examples the worker lists (trueno_web/app/try_it.py: the panels' own code), and
// the output of a run: stdout, stderr, the last value, pictures (PNG from trueno_web.display) and an error with
// the user's line; "compiling N kernels…" while a run's first call waits for its kernels longer than
// NOTE_AFTER_MS. #panel-try carries data-state ("done" once a run came back, "busy" while one runs),
// data-runs (runs shown), data-compiles (compiles the runs waited for), data-notes (compile notes shown) and
// data-error-line (the user's line of the error shown, else "").

import { $, el, ms } from "./draw.mjs";

const INDENT = "    ";
const NOTE_AFTER_MS = 400;  // a compile done sooner shows no note
const cell = { worker: null, examples: [], seq: 0, running: false, note: 0 };

function run() {
  if (cell.running || !cell.worker) return;
  cell.running = true;
  cell.seq++;
  $("#panel-try").dataset.state = "busy";
  $("#try-run").disabled = true;
  $("#try-meta").textContent = "running…";
  cell.worker.postMessage({ type: "try", seq: cell.seq, code: $("#try-code").value });
}

// Tab / Shift+Tab indent or unindent the selected lines (or insert spaces at the caret); Ctrl/Cmd+Enter runs.
function onKey(e) {
  const area = e.target;
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    e.preventDefault();
    run();
    return;
  }
  if (e.key !== "Tab" || e.altKey || e.ctrlKey || e.metaKey) return;
  e.preventDefault();
  const { value, selectionStart: a, selectionEnd: b } = area;
  if (a === b && !e.shiftKey) {
    area.setRangeText(INDENT, a, b, "end");
    return;
  }
  const from = value.lastIndexOf("\n", a - 1) + 1;
  const lines = value.slice(from, b).split("\n");
  const changed = lines.map((l) => (e.shiftKey ? l.replace(/^ {1,4}/, "") : INDENT + l)).join("\n");
  area.setRangeText(changed, from, b, "select");
}

function load(name) {
  const example = cell.examples.find((x) => x.name === name);
  if (example) $("#try-code").value = example.code;
}

export function setUpTryIt(worker) {
  cell.worker = worker;
  const area = $("#try-code");
  area.addEventListener("keydown", onKey);
  $("#try-run").addEventListener("click", run);
  $("#try-example").addEventListener("change", (e) => load(e.target.value));
  $("#panel-try").dataset.runs = "0";
}

// The worker's examples: [{name, label, code}]; the first is loaded into the editor.
export function tryItReady(examples) {
  cell.examples = examples;
  $("#try-example").replaceChildren(...examples.map((x) => el("option", { value: x.name }, x.label)));
  $("#try-example").disabled = false;
  if (!$("#try-code").value.trim()) load(examples[0].name);
  $("#try-run").disabled = false;
  $("#try-meta").textContent = "Ctrl+Enter (Cmd+Enter) runs the code";
  $("#panel-try").dataset.state = "ready";
}

// Select line n (1-based) of the editor, so that the error's line shows where it is.
function selectLine(n) {
  const area = $("#try-code"), lines = area.value.split("\n");
  const start = lines.slice(0, n - 1).reduce((at, l) => at + l.length + 1, 0);
  area.focus();
  area.setSelectionRange(start, start + (lines[n - 1] || "").length);
}

function errorBlock(error, code) {
  const line = error.line ? code.split("\n")[error.line - 1] : null;
  const head = el("div", { class: "try-error-head" }, error.line ? `${error.type} at line ${error.line}: ` : `${error.type}: `,
    el("code", {}, line !== null && line !== undefined ? line.trim() : error.message));
  if (error.line) {
    head.title = "select this line in the editor";
    head.classList.add("to-line");
    head.addEventListener("click", () => selectLine(error.line));
  }
  return el("div", { class: "try-error", data: { line: String(error.line || "") } }, head, el("pre", {}, error.traceback));
}

// The worker's {type: "compiling", n}: the run waits for n kernels to compile (a deep program's first call);
// 0: they are compiled. The note shows only where the compile lasts past NOTE_AFTER_MS.
export function tryCompiling(n) {
  clearTimeout(cell.note);
  if (!cell.running) return;
  if (n > 0) {
    $("#panel-try").dataset.compiles = String(Number($("#panel-try").dataset.compiles || 0) + 1);
    cell.note = setTimeout(() => {
      $("#try-meta").textContent = `compiling ${n} kernel${n === 1 ? "" : "s"}…`;
      $("#panel-try").dataset.notes = String(Number($("#panel-try").dataset.notes || 0) + 1);
    }, NOTE_AFTER_MS);
  } else {
    $("#try-meta").textContent = "running…";
  }
}

// A run's answer: {seq, output: [{kind, text} | {kind: "picture", png, width, height}], error, ms, backend, code}.
export function renderTry(data) {
  clearTimeout(cell.note);
  cell.running = false;
  const out = $("#try-output");
  out.replaceChildren(...data.output.map((item) => item.kind === "picture" ?
    el("img", { class: "try-picture", src: `data:image/png;base64,${item.png}`, alt: `picture ${item.width}×${item.height}` }) :
    el("pre", { class: `try-${item.kind}` }, item.text)));
  if (data.error) out.append(errorBlock(data.error, data.code));
  const panel = $("#panel-try");
  panel.dataset.state = "done";
  panel.dataset.runs = String(Number(panel.dataset.runs || 0) + 1);
  panel.dataset.errorLine = data.error ? String(data.error.line || "") : "";
  $("#try-run").disabled = false;
  $("#try-meta").textContent = `${data.error ? "stopped at an error" : "ran"} in ${ms(data.ms)} on ${data.backend}`;
}
