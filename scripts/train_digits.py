"""Train the digit classifier that trueno_web.models.Mlp.digits() loads, and write its weights.

    .venv/bin/pip install scikit-learn      # for this script only: the data set ships inside it
    .venv/bin/python scripts/train_digits.py

Data: scikit-learn's bundled `load_digits` (1797 8x8 images, intensities 0..16, no download). A seeded,
stratified split keeps 20% of each class out of training (359 digits). The model: 64 -> 32 (relu) -> 10,
softmax cross-entropy, Adam with minibatches of 64, in NumPy, seeded; it prints the held-out accuracy.

Output: trueno_web/data/digits_train.bin, the training split (train_x (1438, 64) U8, train_y (1438,) U8),
and trueno_web/data/digits_mlp.bin in the safetensors format (an 8-byte little-endian header length,
a JSON header, then the raw little-endian arrays; trueno_web.models.read_safetensors reads it with the
standard library):

    w1 (64, 32) F32   b1 (32,) F32   w2 (32, 10) F32   b2 (10,) F32
    test_x (359, 64) U8   the held-out digits, intensities 0..16 as load_digits gives them
    test_y (359,) U8      their labels
    __metadata__: activation, input (what a row of x is), test_accuracy, train_accuracy, seed, source

The input scaling (x / 16) is folded into w1 (exact: a power of two), so the model takes load_digits'
pixels as they are: probabilities = softmax(relu(x @ w1 + b1) @ w2 + b2).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

SEED = 0
HIDDEN = 32
EPOCHS = 150
BATCH = 64
LR = 3e-3
WEIGHT_DECAY = 1e-4
OUT = Path(__file__).resolve().parent.parent / "trueno_web" / "data" / "digits_mlp.bin"
TRAIN_OUT = OUT.with_name("digits_train.bin")  # the training split, for training in the page and the demo


def split(y: np.ndarray, rng: np.random.Generator, test_fraction: float = 0.2):
    """Indices (train, test): test_fraction of each class held out."""
    train, test = [], []
    for c in range(10):
        idx = rng.permutation(np.flatnonzero(y == c))
        k = round(len(idx) * test_fraction)
        test.extend(idx[:k])
        train.extend(idx[k:])
    return np.sort(np.array(train)), np.sort(np.array(test))


def forward(params, x):
    h = np.maximum(x @ params["w1"] + params["b1"], 0.0)
    z = h @ params["w2"] + params["b2"]
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return h, p / p.sum(axis=1, keepdims=True)


def train(x, y, rng):
    params = {
        "w1": rng.standard_normal((64, HIDDEN)) * np.sqrt(2 / 64),
        "b1": np.zeros(HIDDEN),
        "w2": rng.standard_normal((HIDDEN, 10)) * np.sqrt(1 / HIDDEN),
        "b2": np.zeros(10),
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    onehot = np.eye(10)[y]
    step = 0
    for _ in range(EPOCHS):
        order = rng.permutation(len(x))
        for start in range(0, len(x), BATCH):
            i = order[start : start + BATCH]
            h, p = forward(params, x[i])
            dz = (p - onehot[i]) / len(i)
            dh = (dz @ params["w2"].T) * (h > 0)
            grads = {"w2": h.T @ dz, "b2": dz.sum(0), "w1": x[i].T @ dh, "b1": dh.sum(0)}
            step += 1
            for k, g in grads.items():  # Adam, with decoupled weight decay on the matrices
                m[k] = 0.9 * m[k] + 0.1 * g
                v[k] = 0.999 * v[k] + 0.001 * g * g
                update = (m[k] / (1 - 0.9**step)) / (np.sqrt(v[k] / (1 - 0.999**step)) + 1e-8)
                params[k] -= LR * (update + (WEIGHT_DECAY * params[k] if k[0] == "w" else 0.0))
    return params


def write_safetensors(path: Path, arrays: dict[str, np.ndarray], metadata: dict[str, str]) -> None:
    header, blobs, offset = {"__metadata__": metadata}, [], 0
    dtypes = {np.dtype(np.float32): "F32", np.dtype(np.uint8): "U8"}
    for name, a in arrays.items():
        raw = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": dtypes[a.dtype], "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the data starts 8-byte aligned, as the format recommends
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def main() -> None:
    digits = load_digits()
    pixels, y = digits.data.astype(np.uint8), digits.target.astype(np.int64)  # 0..16
    rng = np.random.default_rng(SEED)
    tr, te = split(y, rng)
    x = pixels / 16.0
    params = train(x[tr], y[tr], rng)
    acc = {
        name: float((forward(params, x[i])[1].argmax(1) == y[i]).mean()) for name, i in (("train", tr), ("test", te))
    }

    # what is shipped: float32, the /16 folded into w1; check the float32 model still scores the same
    shipped = {
        "w1": (params["w1"] / 16).astype(np.float32),
        "b1": params["b1"].astype(np.float32),
        "w2": params["w2"].astype(np.float32),
        "b2": params["b2"].astype(np.float32),
    }
    test_acc_f32 = float((forward(shipped, pixels[te].astype(np.float32))[1].argmax(1) == y[te]).mean())
    assert test_acc_f32 == acc["test"], (test_acc_f32, acc["test"])
    write_safetensors(
        OUT,
        {**shipped, "test_x": pixels[te], "test_y": y[te].astype(np.uint8)},
        {
            "activation": "relu",
            "input": "64 pixels of an 8x8 digit, row-major, intensities 0..16 (sklearn load_digits)",
            "test_accuracy": f"{acc['test']:.6f}",
            "train_accuracy": f"{acc['train']:.6f}",
            "test_size": str(len(te)),
            "seed": str(SEED),
            "source": "scripts/train_digits.py: 64-32-10 MLP on sklearn.datasets.load_digits, 20% per class held out",
        },
    )
    write_safetensors(
        TRAIN_OUT,
        {"train_x": pixels[tr], "train_y": y[tr].astype(np.uint8)},
        {
            "input": "64 pixels of an 8x8 digit, row-major, intensities 0..16 (sklearn load_digits)",
            "source": "scripts/train_digits.py: the training split of sklearn.datasets.load_digits (80% per class)",
        },
    )
    print(f"train {len(tr)} digits, held out {len(te)}; hidden {HIDDEN} relu, {EPOCHS} epochs")
    print(f"train accuracy {acc['train']:.4f}; held-out test accuracy {acc['test']:.4f}")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
