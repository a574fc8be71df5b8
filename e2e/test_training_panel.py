"""The demo page's training panel in headless Chromium, with WebGPU (SwiftShader) and without (the WASM SIMD
fallback): the digits MLP trained from random weights in the tab reaches >= 95% held-out accuracy in about
300 steps, the curves have their points, a drawing is classified while it trains (the page stays
responsive), Stop stops it within one round-trip, the backend is named honestly, and the draw-a-digit panel
then classifies with the weights trained here (and back with the shipped ones).

The steps/s each backend reached are printed (`-s` shows them), for docs/benchmarks.md."""

from __future__ import annotations

import re

from e2e.harness import ROOT
from e2e.test_demo_page import draw_on_pad, env_of

STEPS = 300  # Stop once the page reports at least this many steps
CHUNK = 10  # steps per message round-trip (web/training.mjs)
TRAIN_TIMEOUT_MS = 900_000


def panel(page) -> dict:
    return page.evaluate("""() => {
        const d = document.querySelector('#panel-train').dataset;
        const text = (s) => document.querySelector(s).innerText;
        return {state: d.state, steps: Number(d.steps), accuracy: Number(d.accuracy), backend: d.backend,
                loss_points: Number(d.lossPoints), accuracy_points: Number(d.accuracyPoints),
                steps_per_s: Number(d.stepsPerS), reason: d.reason, meta: text('#train-meta'),
                stats: text('#train-stats')};
    }""")


def wait_steps(page, at_least: int) -> None:
    page.wait_for_function(
        "n => Number(document.querySelector('#panel-train').dataset.steps) >= n",
        arg=at_least,
        polling=100,
        timeout=TRAIN_TIMEOUT_MS,
    )


def stop_and_wait(page) -> tuple[int, dict]:
    # the steps shown and the click in one task of the page: a chunk's result handled between reading them
    # and a separate click (Playwright's takes a while) would already have asked for the next chunk
    clicked_at = page.evaluate(
        "() => { const s = +document.querySelector('#panel-train').dataset.steps;"
        " document.querySelector('#train-stop').click(); return s; }"
    )
    page.wait_for_function(
        "document.querySelector('#panel-train').dataset.state === 'done'", polling=50, timeout=120_000
    )
    return clicked_at, panel(page)


def ink(page, selector: str) -> float:
    return page.evaluate(
        """(sel) => { const c = document.querySelector(sel), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200 || d[i + 2] < 200) n++;
        return n / (c.width * c.height); }""",
        selector,
    )


def shown_digit(page, weights: str) -> dict:
    page.wait_for_function(
        "w => { const d = document.querySelector('#panel-digits').dataset; return d.pending === '0' && d.shownWeights === w; }",
        arg=weights,
        polling=50,
        timeout=60_000,
    )
    return page.evaluate("""() => {
        const d = document.querySelector('#panel-digits').dataset, nums = (s) => s ? s.split(',').map(Number) : [];
        return {predicted: d.predicted, probabilities: nums(d.probabilities), cpu: nums(d.cpuProbabilities),
                timing: document.querySelector('#digit-timing').innerText,
                accuracy: document.querySelector('#digit-accuracy').innerText};
    }""")


def test_trains_to_95_percent_stops_and_classifies_with_its_weights(demo):
    page = demo.page
    assert demo.state == "ready", demo.error_text()
    backend = env_of(demo)["backend"]
    page.wait_for_function("document.querySelector('#panel-train').dataset.state === 'idle'", timeout=30_000)
    assert page.is_disabled("input[name='weights'][value='trained']")
    meta = panel(page)["meta"]
    if backend == "webgpu":
        assert "WebGPU on SwiftShader (a software GPU: it runs on the CPU)" in meta, meta
    else:
        assert "the CPU fallback (wasm-simd, no GPU)" in meta and "WebGPU" not in meta, meta
    assert ink(page, "#train-loss") > 0 and ink(page, "#train-accuracy") > 0  # empty axes before a run

    page.click("#train-start")
    wait_steps(page, 50)
    # a drawing sent meanwhile is classified between two chunks, while the run goes on
    one = [[(140, 40 + 5 * k) for k in range(41)]]
    shown = draw_on_pad(page, one)
    assert shown["predicted"] == "1" and panel(page)["state"] == "training", (shown, panel(page))
    shipped = shown_digit(page, "shipped")

    wait_steps(page, STEPS)
    clicked_at, done = stop_and_wait(page)
    assert done["reason"] == "stopped" and clicked_at <= done["steps"] <= clicked_at + CHUNK, (clicked_at, done)
    page.wait_for_timeout(1500)
    assert panel(page)["steps"] == done["steps"]  # Stop stopped it
    assert done["backend"] == backend and done["accuracy"] >= 0.95, done
    assert done["loss_points"] == done["steps"] and done["accuracy_points"] == done["steps"] // 25 + 1 + (
        done["steps"] % 25 > 0
    ), done
    assert f"{100 * done['accuracy']:.1f}%" in done["meta"] and "stopped at step" in done["meta"], done["meta"]
    assert ink(page, "#train-loss") > 0.01 and ink(page, "#train-accuracy") > 0.01
    print(
        f"\n[training panel] {demo.mode}: {backend}, {done['steps']} steps, held-out accuracy "
        f"{100 * done['accuracy']:.1f}%, {done['steps_per_s']:.1f} steps/s in the worker ({done['stats']!r})"
    )

    # the draw panel classifies the same drawing with the weights just trained, then with the shipped ones again
    page.check("input[name='weights'][value='trained']")
    trained = shown_digit(page, "trained")
    assert "weights: trained in this tab (run 1, " in trained["timing"], trained["timing"]
    assert "weights trained in this tab" in trained["accuracy"] and "held-out digits" in trained["accuracy"]
    assert len(trained["probabilities"]) == 10 and abs(sum(trained["probabilities"]) - 1) < 1e-5
    assert max(abs(a - b) for a, b in zip(trained["probabilities"], shipped["probabilities"])) > 1e-3
    if backend == "webgpu":  # the trained weights on the CPU fallback too: the same probabilities
        assert max(abs(a - b) for a, b in zip(trained["probabilities"], trained["cpu"])) < 1e-4, trained
    page.check("input[name='weights'][value='shipped']")
    again = shown_digit(page, "shipped")
    assert again["probabilities"] == shipped["probabilities"] and "weights: shipped" in again["timing"]

    # a new run starts from new random weights and drops the trained ones until it ends
    page.check("input[name='weights'][value='trained']")
    shown_digit(page, "trained")
    page.click("#train-start")
    shown_digit(page, "shipped")
    assert page.is_disabled("input[name='weights'][value='trained']")
    wait_steps(page, 10)
    _, second = stop_and_wait(page)
    assert second["reason"] == "stopped" and second["steps"] < STEPS
    assert not page.is_disabled("input[name='weights'][value='trained']")
    page.click("#digit-clear")
    assert demo.problems() == []
    assert demo.state == "ready"


def test_code_disclosure_shows_the_readme_training_loop(demo):
    page = demo.page
    assert page.is_hidden("#train-code pre")
    page.click("#train-code summary")
    code = page.inner_text("#train-code pre")
    readme = (ROOT / "README.md").read_text()
    loop = re.search(r"```python\n(params = .*?)```", readme, re.S).group(1)
    lines = lambda text: [line for line in text.splitlines() if line.strip()]  # noqa: E731 (blank lines may differ)
    assert "tw.value_and_grad(loss_fn)" in loop and lines(code) == lines(loop)
