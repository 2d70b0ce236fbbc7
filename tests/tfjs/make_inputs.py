#!/usr/bin/python3
"""Inputs for the face models: square crops of photographs, preprocessed as @vladmandic/human does.

    make_inputs.py MODEL OUT_DIR COUNT SEED IMAGE...

MODEL is emotion, antispoof, liveness or faceres. Crops (a side of 15-60 % of the image's
shorter side, anywhere in it, from a fixed seed) of the given images, resized bilinearly to the
model's input, as human feeds them: emotion 64x64 grayscale (0.2989 R + 0.587 G + 0.114 B on
[0, 1], then (g - 0.5) * 2); antispoof 128x128 and liveness 32x32 RGB in [0, 1]; faceres
224x224 RGB in [0, 255]. Writes OUT_DIR/<i>.npy, NHWC float32 [1, H, W, C].
"""
import os
import sys

import numpy as np
from PIL import Image

SIZES = {"emotion": 64, "antispoof": 128, "liveness": 32, "faceres": 224}


def preprocess(model, rgb):
    x = np.asarray(rgb, np.float32) / 255.0
    if model == "emotion":
        gray = x @ np.array([0.2989, 0.587, 0.114], np.float32)
        return ((gray - 0.5) * 2.0)[None, :, :, None]
    if model == "faceres":
        return (x * 255.0)[None]
    return x[None]


def main():
    if len(sys.argv) < 6 or sys.argv[1] not in SIZES:
        raise SystemExit(__doc__)
    model, out, count, seed, images = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
    rng = np.random.default_rng(seed)
    pictures = [Image.open(p).convert("RGB") for p in images]
    os.makedirs(out, exist_ok=True)
    size = SIZES[model]
    for i in range(count):
        img = pictures[rng.integers(len(pictures))]
        side = int(min(img.size) * rng.uniform(0.15, 0.6))
        x0, y0 = rng.integers(0, img.size[0] - side + 1), rng.integers(0, img.size[1] - side + 1)
        crop = img.crop((x0, y0, x0 + side, y0 + side)).resize((size, size), Image.BILINEAR)
        np.save(os.path.join(out, f"{i}.npy"), np.ascontiguousarray(preprocess(model, crop), np.float32))


if __name__ == "__main__":
    main()
