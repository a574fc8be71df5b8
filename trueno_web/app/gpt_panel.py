"""The demo page's tiny-GPT panel, its worker side: the character-level GPT that ships with the package
(char_gpt.py, `CharGpt.shipped`, trained on Macbeth) loaded once on the page's device, sampling a few
characters per call so that the page stays responsive and Stop takes effect within one message round-trip.
Each character is drawn on the device from `tw.random.key(seed)` folded with its step (as `CharGpt.sample`),
so the same prompt, seed and temperature give the same text on WebGPU, wasm-simd and NumPy, in one call or
in chunks. Standard library only.

    panel = GptPanel(session)               # session: a DemoSession (its device)
    await panel.start("MACBETH.", seed=0, temperature=0.8, n_chars=200)   # loads the model the first time
    await panel.run(4)                      # up to 4 more characters: them, the text so far, chars/s
    await panel.stop()                      # ends the run
"""

from __future__ import annotations

import math
import time

from .. import random
from ..char_gpt import CharGpt
from ..errors import TruenoError, TruenoValueError

# The page's "try it" cell loads this (try_it.py): the model and sampling the panel runs, in one call.
TRY_IT = """\
# Panel 6: the tiny GPT writes Macbeth, each character one forward pass on the device (char_gpt.py)
import trueno_web as tw
from trueno_web.char_gpt import CharGpt

model, meta = CharGpt.shipped(dev)  # data/char_gpt.bin: trained on Macbeth
text = await model.sample("MACBETH.", 40, tw.random.key(0), temperature=0.8)
print(text)
"""

MAX_CHARS = 2000  # the longest run start() takes
MAX_PROMPT = 1000
MAX_TEMPERATURE = 5.0


def _whole(value, name: str, lo: int, hi: int) -> int:
    """`value` as an int in lo..hi (a whole float or digits too: what a page's number box sends), or a
    TruenoValueError that says what was wanted."""
    try:
        number = float(value) if isinstance(value, str) else value
        if isinstance(number, float) and number.is_integer():
            number = int(number)
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, int) or not lo <= number <= hi:
        raise TruenoValueError(f"{name} must be a whole number from {lo} to {hi}; got {value!r:.40}")
    return number


def _temperature(value) -> float:
    try:
        t = float(value)
    except (TypeError, ValueError):
        t = math.nan
    if isinstance(value, bool) or not 0 <= t <= MAX_TEMPERATURE:  # NaN fails too
        raise TruenoValueError(
            f"temperature must be a number from 0 (always the likeliest character) to {MAX_TEMPERATURE}; "
            f"got {value!r:.40}"
        )
    return t


class GptPanel:
    """One sampling run at a time on the session's device; the model is loaded on the first start()."""

    def __init__(self, session):
        self.session = session
        self.model, self.meta = None, {}
        self.runs, self.ids, self.n_prompt, self.max_chars = 0, [], 0, 0
        self.prompt, self.key, self.seed, self.temperature = "", None, 0, 1.0
        self.done, self.reason, self.gen_s = True, None, 0.0

    @property
    def dev(self):
        return self.session.dev

    def load(self) -> CharGpt:
        """The shipped weights on the page's device (once)."""
        if self.model is None:
            self.model, self.meta = CharGpt.shipped(self.dev)
        return self.model

    @property
    def generated(self) -> int:
        return len(self.ids) - self.n_prompt

    async def start(self, prompt: str = "MACBETH.", seed=0, temperature=0.8, n_chars=200) -> dict:
        """A new run: `prompt` (its characters must be the play's; empty: a line break, as CharGpt.sample),
        `n_chars` characters to come (1..MAX_CHARS), each drawn at `temperature` from key(seed) folded with
        its step. Bad input raises TruenoValueError before anything changes."""
        if not isinstance(prompt, str) or len(prompt) > MAX_PROMPT:
            raise TruenoValueError(f"the prompt must be a string of at most {MAX_PROMPT} characters")
        seed = _whole(seed, "the seed", 0, 2**32 - 1)
        temperature = _temperature(temperature)
        n_chars = _whole(n_chars, "the number of characters", 1, MAX_CHARS)
        model = self.load()
        try:
            ids = model.vocab.encode(prompt or model.vocab.chars[0])
        except TruenoError as e:
            raise TruenoValueError(f"the prompt has {e}; the model knows only the play's {len(model.vocab)}") from e
        self.runs += 1
        self.prompt, self.ids, self.n_prompt = prompt or model.vocab.chars[0], ids, len(ids)
        self.key, self.seed, self.temperature, self.max_chars = random.key(seed), seed, temperature, n_chars
        self.done, self.reason, self.gen_s = False, None, 0.0
        return self._report("", None)

    async def run(self, n: int = 4) -> dict:
        """Up to `n` more characters (not past the run's length, where the run ends by itself): the new
        characters, the text so far and this call's chars/s."""
        if self.done:
            raise RuntimeError("no text being generated: start() a run first")
        n = max(0, min(int(n), self.max_chars - self.generated))
        t0 = time.perf_counter()
        for _ in range(n):
            step = self.generated
            self.ids.append(await self.model.next_id(self.ids, self.key, step, self.temperature))
        took = time.perf_counter() - t0
        self.gen_s += took
        if self.generated >= self.max_chars:
            self.done, self.reason = True, "length"
        new = self.model.vocab.decode(self.ids[len(self.ids) - n :]) if n else ""
        return self._report(new, n / took if n and took > 0 else None)

    async def stop(self) -> dict:
        """End the run now (Stop)."""
        if self.runs == 0:
            raise RuntimeError("no run to stop")
        if not self.done:
            self.done, self.reason = True, "stopped"
        return self._report("", None)

    def _report(self, new: str, chars_per_s: float | None) -> dict:
        model = self.model
        return {
            "run": self.runs,
            "new": new,  # the characters this call drew
            "text": self.prompt + model.vocab.decode(self.ids[self.n_prompt :]),  # the prompt and all drawn so far
            "prompt": self.prompt,
            "chars": self.generated,
            "max_chars": self.max_chars,
            "chars_per_s": chars_per_s,  # this call's characters over their time in the worker
            "gen_s": self.gen_s,  # every character of the run so far
            "seed": self.seed,
            "temperature": self.temperature,
            "done": self.done,
            "reason": self.reason,  # "length" or "stopped" once done
            "backend": self.dev.backend,
            "n_params": model.n_params(),
            "config": {k: getattr(model.config, k) for k in ("d_model", "n_layers", "n_heads", "context")},
            "vocab_size": len(model.vocab),
            "held_out_loss": float(self.meta.get("held_out_loss", "nan")),
        }
