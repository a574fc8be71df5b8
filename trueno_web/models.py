"""Two small models written only with the public tensor API: a digit classifier (`Mlp`) and a pre-norm
transformer block (`TransformerBlock`). Weights are uploaded once (DeviceArrays); a forward pass is a
lazy expression, so `await probs.numpy()` runs it as ONE batch: matmuls, with layer_norm, bias adds,
gelu, softmax and the residual adds fused around them.

    dev = await tw.GpuDevice.create()
    mlp = await Mlp.digits(dev)                       # the shipped weights (trueno_web/data/digits_mlp.bin)
    probs = await mlp(pixels).numpy()                 # pixels: (N, 64), 8x8 digits, intensities 0..16

No NumPy needed: weights load with the standard library (the file is safetensors, see `read_safetensors`).
"""

from __future__ import annotations

import array
import json
import math
import random
import struct
import sys
from importlib import resources

from .nn import layer_norm, linear, scaled_dot_product_attention
from .tensor import Tensor, asarray


async def upload(device, weights: dict) -> dict:
    """{name: host data or (data, shape)} -> {name: Tensor}, each uploaded once and kept on the device."""
    out = {}
    for name, value in weights.items():
        data, shape = value if isinstance(value, tuple) else (value, None)
        out[name] = asarray(await device.upload(data, shape))
    return out


# ---------------------------------------------------------------- the digit classifier


class Mlp:
    """probabilities = softmax(act(x @ w1 + b1) @ w2 + b2), act relu or gelu; w1 (in, hidden), w2 (hidden, out)."""

    def __init__(self, params: dict, activation: str = "relu"):
        self.w1, self.b1, self.w2, self.b2 = (params[k] for k in ("w1", "b1", "w2", "b2"))
        if activation not in ("relu", "gelu"):
            raise ValueError(f"activation must be 'relu' or 'gelu', not {activation!r}")
        self.activation = activation

    @classmethod
    async def create(cls, device, weights: dict, activation: str = "relu") -> Mlp:
        return cls(await upload(device, weights), activation)

    @classmethod
    async def digits(cls, device) -> Mlp:
        """The classifier trained on scikit-learn's 8x8 digits by scripts/train_digits.py."""
        arrays, meta = load_digits_file()
        return await cls.create(device, {k: arrays[k] for k in ("w1", "b1", "w2", "b2")}, meta["activation"])

    def logits(self, x) -> Tensor:
        x = asarray(x, self.w1.device, dtype=self.w1.dtype).reshape(-1, self.w1.shape[0])  # one row per sample
        h = linear(x, self.w1, self.b1)
        return linear(h.relu() if self.activation == "relu" else h.gelu(), self.w2, self.b2)

    def __call__(self, x) -> Tensor:
        return self.logits(x).softmax(axis=-1)

    def predict(self, x) -> Tensor:
        """The most probable class of each row (int32)."""
        return self.logits(x).argmax(axis=-1)


# ---------------------------------------------------------------- the transformer block


class TransformerBlock:
    """GPT-2's pre-norm block on x of shape (..., L, d_model):

        h = x + attention(layer_norm1(x))       multi-head, causal: position i attends positions <= i
        y = h + mlp(layer_norm2(h))             mlp(z) = gelu(z @ w_fc + b_fc) @ w_proj + b_proj

    Weights (`random_weights` gives seeded ones): ln1_w, ln1_b, ln2_w, ln2_b (d,), w_qkv (d, 3d) with
    b_qkv (3d,) (q, k, v side by side), w_o (d, d), b_o (d,), w_fc (d, f), b_fc (f,), w_proj (f, d), b_proj (d,).
    """

    NAMES = ("ln1_w", "ln1_b", "w_qkv", "b_qkv", "w_o", "b_o", "ln2_w", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj")

    def __init__(self, params: dict, n_heads: int, eps: float = 1e-5):
        for name in self.NAMES:
            setattr(self, name, params[name])
        self.d_model, self.n_heads, self.eps = self.w_o.shape[0], n_heads, eps
        if self.d_model % n_heads:
            raise ValueError(f"d_model {self.d_model} is not a multiple of n_heads {n_heads}")

    @classmethod
    async def create(cls, device, weights: dict, n_heads: int, eps: float = 1e-5) -> TransformerBlock:
        return cls(await upload(device, weights), n_heads, eps)

    def __call__(self, x) -> Tensor:
        x = asarray(x, self.w_o.device, dtype=self.w_o.dtype)
        *lead, n, d = x.shape
        p, h = len(lead), self.n_heads
        # q, k, v from one matmul, as views (3, ..., heads, L, d_head) of it that the attention kernel reads in place
        qkv = linear(layer_norm(x, self.ln1_w, self.ln1_b, self.eps), self.w_qkv, self.b_qkv)
        qkv = qkv.reshape(*lead, n, 3, h, d // h).permute(p + 1, *range(p), p + 2, p, p + 3)
        att = scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], causal=True)  # (..., heads, L, d_head)
        x = x + linear(att.swapaxes(-3, -2).reshape(x.shape), self.w_o, self.b_o)  # heads side by side again
        z = linear(layer_norm(x, self.ln2_w, self.ln2_b, self.eps), self.w_fc, self.b_fc).gelu()
        return x + linear(z, self.w_proj, self.b_proj)

    @staticmethod
    def shapes(d_model: int, d_ff: int | None = None) -> dict:
        """{name: shape} of the weights; d_ff (the MLP's width) defaults to 4 * d_model."""
        d, f = d_model, d_ff or 4 * d_model
        return {
            "ln1_w": (d,),
            "ln1_b": (d,),
            "w_qkv": (d, 3 * d),
            "b_qkv": (3 * d,),
            "w_o": (d, d),
            "b_o": (d,),
            "ln2_w": (d,),
            "ln2_b": (d,),
            "w_fc": (d, f),
            "b_fc": (f,),
            "w_proj": (f, d),
            "b_proj": (d,),
        }

    @classmethod
    def random_weights(cls, d_model: int, d_ff: int | None = None, seed: int = 0) -> dict:
        """Seeded weights as {name: (array.array('f'), shape)} (standard library only): matrices
        N(0, 1/fan_in), biases N(0, 0.1^2), layer-norm scales 1 + N(0, 0.1^2)."""
        rng, out = random.Random(seed), {}
        for name, shape in cls.shapes(d_model, d_ff).items():
            sd, mean = (1 / math.sqrt(shape[0]), 0.0) if len(shape) == 2 else (0.1, float(name.endswith("_w")))
            out[name] = (array.array("f", [rng.gauss(mean, sd) for _ in range(math.prod(shape))]), shape)
        return out


# ---------------------------------------------------------------- weights on disk

DIGITS_FILE = "digits_mlp.bin"
DIGITS_TRAIN_FILE = "digits_train.bin"  # the training split (scripts/train_digits.py)
_DTYPES = {"F32": "f", "U8": "B"}


def read_safetensors(blob: bytes) -> tuple[dict, dict]:
    """Parse the safetensors format (u64 little-endian header length, a JSON header of
    {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}, then the raw
    little-endian data) into ({name: (array.array, shape)}, metadata). Dtypes: F32 and U8."""
    (n,) = struct.unpack_from("<Q", blob, 0)
    header = json.loads(bytes(blob[8 : 8 + n]))
    meta = header.pop("__metadata__", {})
    arrays = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        values = array.array(_DTYPES[info["dtype"]], bytes(blob[8 + n + begin : 8 + n + end]))
        if sys.byteorder == "big":
            values.byteswap()
        arrays[name] = (values, tuple(info["shape"]))
    return arrays, meta


def write_safetensors(arrays: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of {name: (data, shape)} (float32: array.array('f'), a NumPy array or any
    sequence of numbers) with `metadata` ({str: str}); `read_safetensors` reads them back. Standard library only."""
    header, blobs, offset = {"__metadata__": dict(metadata or {})}, [], 0
    for name, (data, shape) in arrays.items():
        if hasattr(data, "astype"):  # NumPy: little-endian float32 bytes without a copy per element
            raw = data.astype("<f4").tobytes()
        else:
            values = data if isinstance(data, array.array) and data.typecode == "f" else array.array("f", data)
            if sys.byteorder == "big":
                values = array.array("f", values)
                values.byteswap()
            raw = values.tobytes()
        if len(raw) != 4 * math.prod(shape):
            raise ValueError(f"{name}: {len(raw) // 4} values for shape {tuple(shape)}")
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the data starts 8-byte aligned, as the format recommends
    return struct.pack("<Q", len(head)) + head + b"".join(blobs)


def load_digits_file() -> tuple[dict, dict]:
    """The shipped digit classifier: w1, b1, w2, b2 (float32), test_x (uint8 pixels 0..16, (N, 64)) and
    test_y (uint8 labels) of the held-out digits, and metadata (activation, accuracy, ...)."""
    return read_safetensors(resources.files(__package__).joinpath("data", DIGITS_FILE).read_bytes())


def load_digits_data() -> dict:
    """The digits as training needs them: train_x (N, 64) and test_x (359, 64) pixels (0..16) and train_y and
    test_y labels, each a flat float32 array.array, and the counts train_n and test_n."""
    train, _ = read_safetensors(resources.files(__package__).joinpath("data", DIGITS_TRAIN_FILE).read_bytes())
    test, _ = load_digits_file()
    out = {}
    for split, arrays in (("train", train), ("test", test)):
        out[f"{split}_x"] = array.array("f", arrays[f"{split}_x"][0])
        out[f"{split}_y"] = array.array("f", arrays[f"{split}_y"][0])
        out[f"{split}_n"] = arrays[f"{split}_y"][1][0]
    return out
