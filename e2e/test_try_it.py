"""The demo page's "try it" cell (panel 7, web/tryit.mjs) and its phone layout, in headless Chromium, served by
`python -m trueno_web serve`: with WebGPU (SwiftShader) and without (the WASM SIMD fallback), the cell runs a
user's expression typed into the editor (Ctrl+Enter) and shows its output (the printed matmul against NumPy)
and a picture, and an error names the user's line, and a deep loop's first run tells the page of its compile
(the "compiling N kernels" note); at a phone's 390x844 the digit pad and its answer are in the first screen,
and a scribble on the pad is answered "not sure"."""

from __future__ import annotations

import re

import numpy as np
import pytest

from e2e.test_demo_page import NO_WEBGPU, PHONE, WEBGPU, DemoPage, draw_on_pad, env_of

CODE = """\
x = dev.tensor([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]])
w = dev.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, -1.5]])
print("product", (await (x @ w).numpy()).tolist())
x.shape"""
BAD = "y = dev.tensor([1.0, 2.0, 3.0])\nprint('first')\nz = y.reshape(2, 2)\n"
PICTURE = "from trueno_web.display import Picture\nPicture([0, 0.25, 0.5, 1, 1, 0.5, 0.25, 0], 4, 2, scale=3)"
DEEP = "c = dev.tensor([-0.5, 0.25, -1.2, 0.1])\nz = c\nfor _ in range(40):\n    z = z * z + c\nawait z.sum().item()"
SCRIBBLE = [[(30, 40), (250, 200), (60, 230), (220, 30), (40, 120), (260, 110)]]


def run_in_cell(page, code: str, runs: int) -> dict:
    """Type `code` into the editor, run it with Ctrl+Enter, wait for the run's answer; what the cell shows."""
    page.wait_for_function("document.querySelector('#panel-try').dataset.state !== 'pending'", timeout=60_000)
    page.fill("#try-code", code)
    page.press("#try-code", "Control+Enter")
    page.wait_for_function(
        "n => document.querySelector('#panel-try').dataset.runs === String(n)", arg=runs, polling=50, timeout=120_000
    )
    return page.evaluate("""() => ({
        output: [...document.querySelectorAll('#try-output pre')].map((p) => ({kind: p.className, text: p.textContent})),
        errorLine: document.querySelector('#panel-try').dataset.errorLine,
        error: document.querySelector('#try-output .try-error')?.innerText ?? null,
        meta: document.querySelector('#try-meta').textContent,
    })""")


def test_the_cell_runs_code_and_names_the_line_of_an_error(demo):
    page = demo.page
    backend = env_of(demo)["backend"]
    examples = page.eval_on_selector_all("#try-example option", "os => os.map((o) => o.value)")
    assert examples == ["tensors", "activations", "filters", "chain", "digits", "training", "gpt"], examples
    assert "dev.tensor" in page.input_value("#try-code")  # the first example is loaded

    shown = run_in_cell(page, CODE, 1)
    assert shown["error"] is None and shown["errorLine"] == "", shown
    printed, value = shown["output"]
    assert printed["kind"] == "try-stdout" and value["kind"] == "try-result" and value["text"] == "(2, 3)", shown
    got = np.array(eval(printed["text"].removeprefix("product ")))
    want = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]]) @ np.array([[1.0, 0.0], [0.0, 1.0], [2.0, -1.5]])
    assert np.allclose(got, want, rtol=1e-6), (got, want)
    assert re.search(rf"ran in [\d.]+ ms on {backend}$", shown["meta"]), shown["meta"]

    shown = run_in_cell(page, BAD, 2)
    assert shown["errorLine"] == "3" and shown["output"][0]["text"] == "first\n", shown
    assert "TruenoValueError at line 3: z = y.reshape(2, 2)" in shown["error"], shown["error"]
    assert 'File "<try-it>", line 3, in <module>' in shown["error"], shown["error"]
    page.click("#try-output .try-error-head")  # selects the line in the editor
    selected = page.evaluate(
        "() => { const a = document.querySelector('#try-code'); return a.value.slice(a.selectionStart, a.selectionEnd); }"
    )
    assert selected == "z = y.reshape(2, 2)", selected

    shown = run_in_cell(page, PICTURE, 3)
    assert shown["error"] is None and shown["output"] == [], shown
    size = page.evaluate(
        "() => { const i = document.querySelector('#try-output img'); return [i.naturalWidth, i.naturalHeight]; }"
    )
    assert size == [3 * 4, 3 * 2], size  # 4x2 values, each 3x3 pixels

    compiles = lambda: int(page.get_attribute("#panel-try", "data-compiles") or 0)  # noqa: E731
    before = compiles()
    c = np.array([-0.5, 0.25, -1.2, 0.1], np.float32)
    z = c.copy()
    for _ in range(40):
        z = z * z + c
    for runs in (4, 5):  # a deep loop's kernels: compiled on the first run (the page hears of it), not again
        shown = run_in_cell(page, DEEP, runs)
        assert shown["error"] is None and abs(float(shown["output"][0]["text"]) - float(z.sum())) <= 1e-4, shown
        assert compiles() == before + (demo.mode == WEBGPU), (runs, compiles(), before)

    page.select_option("#try-example", "digits")  # a panel's own code, loaded into the editor
    assert "DigitClassifier.load(dev, None)" in page.input_value("#try-code")
    assert demo.problems() == [] and demo.state == "ready"
    if demo.mode == NO_WEBGPU:
        assert "CPU fallback" in page.inner_text("#panel-try h2") and "GPU (" not in page.inner_text("#panel-try h2")


@pytest.mark.parametrize("mode", [WEBGPU, NO_WEBGPU])
def test_phone_puts_the_pad_and_its_answer_in_the_first_screen(request, demo_server, mode):
    """At 390x844 the digit panel comes first, its pad and answer within the first screen (also under the
    no-WebGPU banner); a scribble on the pad is answered "not sure" with the best guess, still in that screen;
    the try-it editor fits the screen."""
    browser = request.getfixturevalue("browser" if mode == WEBGPU else "browser_no_webgpu")
    demo = DemoPage(browser, demo_server, viewport=PHONE)
    try:
        assert demo.open().state == "ready", demo.error_text()
        boxes = demo.page.evaluate("""() => Object.fromEntries(['#digit-pad', '.digit-answer', '#try-code', '#panel-digits',
            'main > .panel:first-of-type'].map((s) => [s, document.querySelector(s).getBoundingClientRect().toJSON()]))""")
        pad, answer, editor = boxes["#digit-pad"], boxes[".digit-answer"], boxes["#try-code"]
        assert boxes["#panel-digits"]["top"] <= min(b["top"] for k, b in boxes.items() if k.startswith("main")), boxes
        assert 0 <= pad["top"] and answer["top"] >= pad["bottom"] and answer["bottom"] <= PHONE["height"], boxes
        assert pad["right"] <= PHONE["width"] and answer["right"] <= PHONE["width"], boxes
        assert editor["width"] >= 300 and editor["right"] <= PHONE["width"], boxes

        shown = draw_on_pad(demo.page, SCRIBBLE)
        answer_text = demo.page.inner_text("#digit-confidence")
        assert demo.page.get_attribute("#panel-digits", "data-not-sure") == "1", (shown, answer_text)
        assert answer_text.startswith(f"not sure (best guess: {shown['predicted']}, p = "), answer_text
        assert "held-out" in demo.page.inner_text("#digit-why")
        bottom = demo.page.evaluate("document.querySelector('.digit-answer').getBoundingClientRect().bottom + scrollY")
        assert bottom <= PHONE["height"], bottom
        assert demo.problems() == []
    finally:
        demo.close()
