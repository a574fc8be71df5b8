"""A tiny character-level GPT, written with the tensor API only, so `tw.grad` differentiates it, `opt.trainer`
traces its whole training step once, and it runs on every backend (standard library only: it runs in the
page's worker without NumPy).

    text = load_text()                                   # Shakespeare's Macbeth, shipped (data/README.md)
    model = CharGpt.create(dev, Vocab.from_text(text), Config(d_model=32, n_layers=1), tw.random.key(0))
    step = tw.optim.AdamW(model.params, lr=3e-3).trainer(model.loss)
    for x, y in windows(model.vocab.encode(text), batch=16, context=32, seed=0):
        loss = await step(dev.tensor(x, (16, 32)), dev.tensor(y, (16, 32)))   # one batch per step
    print(await model.sample("MACBETH.\n", 200, tw.random.key(1)))

The model: tokens (B, T) (character indices, float32 integers) -> one_hot @ tok_emb + pos_emb[:T] -> n
GPT-2 pre-norm blocks (models.TransformerBlock, causal) -> layer_norm -> @ w_out: logits (B, T, vocab). The
loss is the cross-entropy of each position's logits against the next character.
"""

from __future__ import annotations

import array
import json
import math
import random as host_random
from dataclasses import asdict, dataclass
from importlib import resources

from . import nn, random
from .autodiff.trees import flatten
from .errors import TruenoValueError
from .models import TransformerBlock, read_safetensors, write_safetensors
from .tensor import Tensor, asarray

TEXT_FILE = "macbeth.txt"
WEIGHTS_FILE = "char_gpt.bin"  # trained by examples/train_char_gpt.py (the command: data/README.md)


def load_text() -> str:
    """The shipped training text: Shakespeare's Macbeth (public domain; provenance in data/README.md)."""
    return resources.files(__package__).joinpath("data", TEXT_FILE).read_text("ascii")


class Vocab:
    """The characters of a text, each with an index (sorted by code point)."""

    def __init__(self, chars: str):
        if len(set(chars)) != len(chars) or not chars:
            raise TruenoValueError("a vocabulary is a non-empty string of distinct characters")
        self.chars = chars
        self.index = {c: i for i, c in enumerate(chars)}

    @classmethod
    def from_text(cls, text: str) -> Vocab:
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        missing = sorted(set(text) - self.index.keys())
        if missing:
            raise TruenoValueError(f"characters outside the vocabulary: {''.join(missing)!r}")
        return [self.index[c] for c in text]

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


@dataclass(frozen=True)
class Config:
    """The model's sizes: width, blocks, heads per block, the longest context, the MLP's width (4 d)."""

    d_model: int = 32
    n_layers: int = 1
    n_heads: int = 4
    context: int = 32
    d_ff: int = 0  # 0: 4 * d_model

    def __post_init__(self):
        if min(self.d_model, self.n_layers, self.n_heads, self.context) < 1 or self.d_model % self.n_heads:
            raise TruenoValueError(f"bad sizes {self}: all positive, d_model a multiple of n_heads")


def windows(ids: list[int], batch: int, context: int, seed: int = 0):
    """Endless minibatches of (x, y), flat float32 arrays of batch * context: x a window of `ids` at a seeded
    random place, y the same window shifted by one character (the next character of each position)."""
    if len(ids) <= context:
        raise TruenoValueError(f"a text of {len(ids)} characters has no window of {context} + 1")
    rng = host_random.Random(seed)
    while True:
        x, y = array.array("f"), array.array("f")
        for _ in range(batch):
            at = rng.randrange(len(ids) - context)
            x.extend(ids[at : at + context])
            y.extend(ids[at + 1 : at + context + 1])
        yield x, y


def init_params(device, vocab_size: int, config: Config, key) -> dict:
    """GPT-2's initialisation drawn on the device from `key`: matrices and embeddings N(0, 0.02^2), the
    projections into the residual stream N(0, (0.02 / sqrt(2 n_layers))^2), biases 0, layer-norm scales 1."""
    d, f = config.d_model, config.d_ff or 4 * config.d_model
    keys = random.split(key, 3 + config.n_layers)

    def normal(k, shape, std=0.02):
        return nn.init.normal(k, shape, std, device=device)

    def const(value, n):
        return asarray(array.array("f", [value]) * n, device)

    params = {
        "tok_emb": normal(keys[0], (vocab_size, d)),
        "pos_emb": normal(keys[1], (config.context, d), 0.01),
        "blocks": [],
        "lnf_w": const(1.0, d),
        "lnf_b": const(0.0, d),
        "w_out": normal(keys[2], (d, vocab_size)),
    }
    residual = 0.02 / math.sqrt(2 * config.n_layers)
    for i in range(config.n_layers):
        k_qkv, k_o, k_fc, k_proj = random.split(keys[3 + i], 4)
        block = {}
        for name, shape in TransformerBlock.shapes(d, f).items():
            if name.startswith("ln"):
                block[name] = const(1.0 if name.endswith("_w") else 0.0, shape[0])
            elif name.startswith("b_"):
                block[name] = const(0.0, shape[0])
            else:
                k = {"w_qkv": k_qkv, "w_o": k_o, "w_fc": k_fc, "w_proj": k_proj}[name]
                block[name] = normal(k, shape, residual if name in ("w_o", "w_proj") else 0.02)
        params["blocks"].append(block)
    return params


def hidden(params: dict, tokens, n_heads: int) -> Tensor:
    """The last layer's normalised states (..., T, d_model) of tokens (..., T)."""
    tokens = asarray(tokens, params["tok_emb"].device)
    n = tokens.shape[-1]
    if n > params["pos_emb"].shape[0]:
        raise TruenoValueError(f"{n} tokens: the model's context is {params['pos_emb'].shape[0]}")
    x = nn.one_hot(tokens, params["tok_emb"].shape[0]) @ params["tok_emb"] + params["pos_emb"][:n]
    for block in params["blocks"]:
        x = TransformerBlock(block, n_heads)(x)
    return nn.layer_norm(x, params["lnf_w"], params["lnf_b"])


def logits(params: dict, tokens, n_heads: int) -> Tensor:
    """(..., T, vocab): the scores of the next character after each position."""
    return hidden(params, tokens, n_heads) @ params["w_out"]


def loss(params: dict, x, y, n_heads: int) -> Tensor:
    """The mean cross-entropy of the next character (y) at every position of the windows x, both (B, T)."""
    return nn.cross_entropy(logits(params, x, n_heads), y)


def gumbel_argmax(scores: Tensor, key, temperature: float = 1.0) -> Tensor:
    """A categorical draw from softmax(scores / temperature) along the last axis (Gumbel-max: argmax of
    scores / T - log(-log(u)), u uniform drawn on the device from `key`); temperature 0: the argmax."""
    if temperature < 0:
        raise TruenoValueError(f"temperature must be >= 0; got {temperature}")
    if temperature == 0:
        return scores.argmax(axis=-1)
    u = random.uniform(key, scores.shape, device=scores)
    return (scores * (1.0 / temperature) - (-u.log()).log()).argmax(axis=-1)


class CharGpt:
    """A vocabulary, sizes and parameters (a dict of tensors: what tw.grad and the optimizers take)."""

    def __init__(self, vocab: Vocab, config: Config, params: dict):
        self.vocab, self.config, self.params = vocab, config, params

    @classmethod
    def create(cls, device, vocab: Vocab, config: Config, key) -> CharGpt:
        return cls(vocab, config, init_params(device, len(vocab), config, key))

    @property
    def device(self):
        return self.params["tok_emb"].device

    def n_params(self) -> int:
        return sum(t.size for t in flatten(self.params, "params", lambda x: isinstance(x, Tensor))[0])

    def logits(self, params: dict, tokens) -> Tensor:
        return logits(params, tokens, self.config.n_heads)

    def loss(self, params: dict, x, y) -> Tensor:
        """loss(params, x, y): pure in `params`, so `tw.value_and_grad(model.loss)` and `opt.trainer(model.loss)`
        see them."""
        return loss(params, x, y, self.config.n_heads)

    async def sample(self, prompt: str, n_chars: int, key, temperature: float = 1.0) -> str:
        """`prompt` followed by `n_chars` characters drawn one at a time (`next_id`, step 0, 1, ...). The same
        key gives the same text."""
        ids = self.vocab.encode(prompt or self.vocab.chars[0])
        for step in range(n_chars):
            ids.append(await self.next_id(ids, key, step, temperature))
        return (prompt or self.vocab.chars[0]) + self.vocab.decode(ids[len(ids) - n_chars :])

    async def next_id(self, ids: list[int], key, step: int, temperature: float = 1.0) -> int:
        """The index of the character after `ids`: the model runs on the last `context` of them (padded on the
        right to the context: the causal mask keeps the padding unseen), draws the next one on the device
        (`gumbel_argmax` with `key` folded with `step`) and reads its index (one batch per character)."""
        n = self.config.context
        window = ids[-n:]
        tokens = asarray(array.array("f", window + [0] * (n - len(window))), self.device, (1, n))
        h = hidden(self.params, tokens, self.config.n_heads)[0, len(window) - 1]
        choice = gumbel_argmax(h @ self.params["w_out"], random.fold_in(key, step), temperature)
        return int(await choice.item())

    @classmethod
    def shipped(cls, device) -> tuple[CharGpt, dict]:
        """The weights trained on the shipped text (data/char_gpt.bin) and their metadata (losses, steps)."""
        return cls.from_bytes(device, resources.files(__package__).joinpath("data", WEIGHTS_FILE).read_bytes())

    # ------------------------------------------------------------ weights on disk (safetensors)

    async def to_bytes(self, metadata: dict | None = None) -> bytes:
        """The parameters as safetensors (names like blocks.0.w_qkv), with the vocabulary, the sizes and
        `metadata` (str values) in its metadata."""
        arrays = {}
        for name, t in named(self.params).items():
            arrays[name] = (await t.numpy(), t.shape)
        meta = {"vocab": json.dumps(self.vocab.chars), "config": json.dumps(asdict(self.config))}
        return write_safetensors(arrays, {**meta, **{k: str(v) for k, v in (metadata or {}).items()}})

    @classmethod
    def from_bytes(cls, device, blob: bytes) -> tuple[CharGpt, dict]:
        """(the model, its metadata) from `to_bytes`'s file."""
        arrays, meta = read_safetensors(blob)
        config = Config(**json.loads(meta["config"]))
        vocab = Vocab(json.loads(meta["vocab"]))
        tensors = {name: asarray(data, device, shape) for name, (data, shape) in arrays.items()}
        params = {k: tensors[k] for k in ("tok_emb", "pos_emb", "lnf_w", "lnf_b", "w_out")}
        params["blocks"] = [
            {name: tensors[f"blocks.{i}.{name}"] for name in TransformerBlock.NAMES} for i in range(config.n_layers)
        ]
        return cls(vocab, config, params), meta


def named(params: dict) -> dict[str, Tensor]:
    """{dotted name: tensor} of the parameters (blocks.0.w_qkv, ...)."""
    out = {}
    for k, v in params.items():
        if k == "blocks":
            for i, block in enumerate(v):
                out.update({f"blocks.{i}.{name}": t for name, t in block.items()})
        else:
            out[k] = v
    return out
