"""The demo page's tiny-GPT panel in headless Chromium, with WebGPU (SwiftShader) and without (the WASM SIMD
fallback): the shipped char GPT samples text in the tab, a few characters per message; the text equals what
the desktop draws (NumPy) for the same prompt, seed and temperature; Stop stops it within one round-trip;
bad input is said in the panel and the page goes on; the backend is named honestly.

The chars/s each backend reached are printed (`-s` shows them), not asserted."""

from __future__ import annotations

import pytest

from e2e.test_demo_page import _in_thread, env_of

PROMPT, SEED, TEMPERATURE, N = "MACBETH.", 7, 0.8, 40
CHUNK = 4  # characters per message round-trip (web/gpt.mjs)
GEN_TIMEOUT_MS = 300_000


@pytest.fixture(scope="module")
def reference() -> str:
    """The same sampling on the desktop's NumPy backend, in one call (CharGpt.sample)."""

    async def run():
        import trueno_web as tw
        from trueno_web.char_gpt import CharGpt

        dev = await tw.GpuDevice.create("numpy")
        model, _ = CharGpt.shipped(dev)
        text = await model.sample(PROMPT, N, tw.random.key(SEED), TEMPERATURE)
        dev.close()
        return text

    return _in_thread(run)


def panel(page) -> dict:
    return page.evaluate("""() => {
        const d = document.querySelector('#panel-gpt').dataset;
        return {state: d.state, chars: Number(d.chars), chars_per_s: Number(d.charsPerS), backend: d.backend,
                reason: d.reason, error: d.error || '', seed: d.seed, text: document.querySelector('#gpt-text').textContent,
                meta: document.querySelector('#gpt-meta').innerText, stats: document.querySelector('#gpt-stats').innerText};
    }""")


def generate(page, prompt: str, seed, temperature, length) -> None:
    page.fill("#gpt-prompt", prompt)
    page.fill("#gpt-seed", str(seed))
    page.fill("#gpt-temperature", str(temperature))
    page.fill("#gpt-length", str(length))
    page.click("#gpt-start")


def wait_state(page, state: str, timeout=GEN_TIMEOUT_MS) -> dict:
    page.wait_for_function(
        "s => document.querySelector('#panel-gpt').dataset.state === s", arg=state, polling=50, timeout=timeout
    )
    return panel(page)


def test_generates_the_desktops_text_and_stops(demo, reference):
    page = demo.page
    assert demo.state == "ready", demo.error_text()
    backend = env_of(demo)["backend"]
    meta = wait_state(page, "idle", 30_000)["meta"]
    if backend == "webgpu":
        assert "WebGPU on SwiftShader (a software GPU: it runs on the CPU)" in meta, meta
    else:
        assert "the CPU fallback (wasm-simd, no GPU)" in meta and "WebGPU" not in meta, meta
    assert page.input_value("#gpt-prompt") == "MACBETH."

    generate(page, PROMPT, SEED, TEMPERATURE, N)
    page.wait_for_function(
        "() => Number(document.querySelector('#panel-gpt').dataset.chars) > 0", polling=50, timeout=GEN_TIMEOUT_MS
    )
    partial = panel(page)  # the text shows as it comes
    done = wait_state(page, "done")
    assert reference.startswith(partial["text"]) and len(partial["text"]) > len(PROMPT), partial
    assert done["text"] == reference, (done["text"], reference)
    assert done["chars"] == N and done["reason"] == "length" and done["backend"] == backend, done
    assert done["seed"] == str(SEED) and f"done at {N} characters" in done["meta"], done
    assert page.inner_text("#gpt-text b") == PROMPT  # the prompt in bold, the drawn text after it
    print(
        f"\n[gpt panel] {demo.mode}: {backend}, {N} characters, {done['chars_per_s']:.1f} chars/s in the worker "
        f"({done['stats']!r}): {done['text']!r}"
    )

    # Stop: a long run stopped after a few chunks stops within one round-trip; its text is the same draw's
    generate(page, PROMPT, SEED, TEMPERATURE, 2000)
    page.wait_for_function(
        "() => Number(document.querySelector('#panel-gpt').dataset.chars) >= 8", polling=50, timeout=GEN_TIMEOUT_MS
    )
    clicked_at = page.evaluate(
        "() => { const n = +document.querySelector('#panel-gpt').dataset.chars;"
        " document.querySelector('#gpt-stop').click(); return n; }"
    )
    stopped = wait_state(page, "done", 120_000)
    assert stopped["reason"] == "stopped" and clicked_at <= stopped["chars"] <= clicked_at + CHUNK, (
        clicked_at,
        stopped,
    )
    page.wait_for_timeout(1500)
    assert panel(page)["chars"] == stopped["chars"]  # Stop stopped it
    assert "stopped at" in stopped["meta"] and len(stopped["text"]) == len(PROMPT) + stopped["chars"]
    n = min(len(stopped["text"]), len(reference))
    assert stopped["text"][:n] == reference[:n]

    # bad input: said in the panel (a trueno_web error), and the page goes on
    generate(page, "caf\u00e9", SEED, TEMPERATURE, 10)
    page.wait_for_function("document.querySelector('#panel-gpt').dataset.error !== ''", polling=50, timeout=60_000)
    bad = panel(page)
    assert bad["state"] == "idle" and "TruenoValueError" in bad["error"] and "outside the vocabulary" in bad["error"]
    assert page.is_hidden("#error") and not page.is_disabled("#gpt-start")
    generate(page, "", 1, 0, 3)  # temperature 0, an empty prompt: still works after the error
    assert wait_state(page, "done")["chars"] == 3
    assert demo.problems() == []
    assert demo.state == "ready"


def test_code_disclosure_shows_the_lines_that_sample(demo):
    page = demo.page
    assert page.is_hidden("#gpt-code pre")
    page.click("#gpt-code summary")
    code = page.inner_text("#gpt-code pre")
    assert "CharGpt.shipped(dev)" in code and "await model.sample(" in code and "tw.random.key(0)" in code
