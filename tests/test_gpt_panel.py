"""The demo page's tiny-GPT panel, its Python side (trueno_web/app/gpt_panel.py, DemoSession.gpt) on the
desktop: the shipped char GPT sampled a few characters per call gives CharGpt.sample's text for the same
prompt, seed and temperature, the same on every backend; the run ends at its length or at stop(); bad
input raises a trueno_web error that says what was wanted."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from conftest import device_for

import trueno_web as tw
from trueno_web.app.demo_page import DemoSession
from trueno_web.char_gpt import CharGpt
from trueno_web.runtime import block_on

ROOT = Path(__file__).resolve().parents[1]
PROMPT, SEED, TEMPERATURE, N = "MACBETH.", 3, 0.8, 24


@pytest.fixture(scope="module")
def session(backend):
    s = block_on(DemoSession.open(backend=backend, cpu_backend="numpy"))
    yield s
    s.dev.close()
    s.cpu.close()


@pytest.fixture(scope="module")
def reference() -> str:
    """The text CharGpt.sample draws in one call on the NumPy device."""
    model, _ = CharGpt.shipped(device_for("numpy"))
    return block_on(model.sample(PROMPT, N, tw.random.key(SEED), TEMPERATURE))


def generate(panel, prompt=PROMPT, seed=SEED, temperature=TEMPERATURE, n_chars=N, chunk=5) -> list[dict]:
    reports = [block_on(panel.start(prompt, seed, temperature, n_chars))]
    while not reports[-1]["done"]:
        reports.append(block_on(panel.run(chunk)))
    return reports


def test_chunks_give_the_same_text_as_sample_on_every_backend(session, reference):
    panel = session.gpt()
    reports = generate(panel)
    first, last = reports[0], reports[-1]
    assert first["chars"] == 0 and first["text"] == PROMPT and not first["done"] and first["new"] == ""
    assert first["backend"] == session.dev.backend and first["vocab_size"] == 67 and first["n_params"] > 100_000
    assert [r["chars"] for r in reports] == [0, 5, 10, 15, 20, 24]
    assert PROMPT + "".join(r["new"] for r in reports) == last["text"] == reference, (last["text"], reference)
    assert last["done"] and last["reason"] == "length" and last["gen_s"] > 0
    assert all(r["chars_per_s"] > 0 for r in reports[1:])
    print(f"\n[gpt panel] {session.dev.backend}: {N / last['gen_s']:.1f} chars/s: {last['text']!r}")
    with pytest.raises(RuntimeError):
        block_on(panel.run(4))  # ended: start another
    # the same seed again, in other chunks: the same text; another seed: other text
    assert generate(panel, chunk=7)[-1]["text"] == reference
    assert generate(panel, seed=SEED + 1)[-1]["text"] != reference


def test_stop_ends_the_run(session, reference):
    panel = session.gpt()
    block_on(panel.start(PROMPT, SEED, TEMPERATURE, 200))
    r = block_on(panel.run(6))
    assert r["chars"] == 6 and not r["done"] and reference.startswith(r["text"])
    stopped = block_on(panel.stop())
    assert stopped["done"] and stopped["reason"] == "stopped" and stopped["chars"] == 6
    assert stopped["text"] == r["text"] and stopped["run"] == r["run"]
    with pytest.raises(RuntimeError):
        block_on(panel.run(1))
    assert block_on(panel.stop())["reason"] == "stopped"  # stopping twice says the same


def test_greedy_and_an_empty_prompt(session):
    panel = session.gpt()
    model, _ = CharGpt.shipped(device_for("numpy"))
    want = block_on(model.sample("", 8, tw.random.key(0), 0))
    assert generate(panel, prompt="", seed=0, temperature=0, n_chars=8)[-1]["text"] == want
    # temperature 0 is the argmax: the seed does not matter
    assert generate(panel, prompt="", seed=9, temperature="0", n_chars=8)[-1]["text"] == want


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("caf\u00e9", 0, 0.8, 10), "outside the vocabulary: '\u00e9'"),
        (("{x}", 0, 0.8, 10), "outside the vocabulary"),
        ((5, 0, 0.8, 10), "prompt must be a string"),
        (("A" * 1001, 0, 0.8, 10), "at most 1000"),
        (("A", -1, 0.8, 10), "seed must be a whole number from 0 to 4294967295"),
        (("A", 1.5, 0.8, 10), "seed must be a whole number"),
        (("A", "", 0.8, 10), "seed must be a whole number"),
        (("A", 0, -0.1, 10), "temperature must be a number from 0"),
        (("A", 0, float("nan"), 10), "temperature must be a number from 0"),
        (("A", 0, "hot", 10), "temperature must be a number from 0"),
        (("A", 0, 0.8, 0), "number of characters must be a whole number from 1 to 2000"),
        (("A", 0, 0.8, 2001), "number of characters"),
    ],
)
def test_bad_input_is_a_clear_error(args, match):
    dev = device_for("numpy")
    panel = DemoSession(dev, dev, {}, None).gpt()
    with pytest.raises(tw.TruenoValueError, match=re.escape(match)):
        block_on(panel.start(*args))
    with pytest.raises(RuntimeError):  # nothing started
        block_on(panel.stop())
    assert block_on(panel.start("A", "7", 1, "3.0"))["seed"] == 7  # a number box's strings are fine


def test_the_pages_code_disclosure_runs(reference):
    """The lines "Show the code" shows (web/index.html) give the panel's text (here on NumPy)."""
    html = (ROOT / "web" / "index.html").read_text()
    block = re.search(r'<details id="gpt-code">.*?<pre[^>]*><code>(.*?)</code>', html, re.S).group(1)
    code = block.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert "CharGpt.shipped(dev)" in code and "await model.sample(" in code
    code = code.replace("await tw.GpuDevice.create()", "DEV").replace('"MACBETH."', repr(PROMPT))
    code = re.sub(r"tw\.random\.key\(\d+\)", f"tw.random.key({SEED})", code)
    code = re.sub(r"temperature=[\d.]+", f"temperature={TEMPERATURE}", code)
    code = re.sub(r"sample\((.*?), \d+,", rf"sample(\1, {N},", code)
    printed = []
    scope = {"DEV": device_for("numpy"), "print": printed.append}
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    block_on(eval(compile(code, "<index.html>", "exec", flags=flags), scope))
    assert printed == [reference]
