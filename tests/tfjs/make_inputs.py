#!/usr/bin/python3
"""Inputs for the face models: crops of photographs, preprocessed as @vladmandic/human does.

    make_inputs.py MODEL OUT_DIR COUNT SEED IMAGE...
    make_inputs.py MODEL OUT_DIR --faces SCREENSHOT cal|test

MODEL is emotion, antispoof, liveness or faceres. The first form takes COUNT square crops (a side
of 15-60 % of the image's shorter side, anywhere in it, from a fixed seed) of the given images;
the second faces of screenshot-facematch.jpg's "extracted faces" grid (6 rows of 18 cells, the
cell's centre without the text printed over its top and bottom), in reading order: every third
one from the first for cal (36), the others and their mirror images for test (144).
Each is resized bilinearly to the model's input, as human feeds it: emotion 64x64 grayscale
(0.2989 R + 0.587 G + 0.114 B on [0, 1], then (g - 0.5) * 2); antispoof 128x128 and liveness
32x32 RGB in [0, 1]; faceres 224x224 RGB in [0, 255]. Writes OUT_DIR/<i>.npy, NHWC float32
[1, H, W, C].
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


def random_crops(count, seed, images):
    rng = np.random.default_rng(seed)
    pictures = [Image.open(p).convert("RGB") for p in images]
    for _ in range(count):
        img = pictures[rng.integers(len(pictures))]
        side = int(min(img.size) * rng.uniform(0.15, 0.6))
        x0, y0 = rng.integers(0, img.size[0] - side + 1), rng.integers(0, img.size[1] - side + 1)
        yield img.crop((x0, y0, x0 + side, y0 + side))


def grid_faces(screenshot):
    img = Image.open(screenshot).convert("RGB")
    if img.size != (1920, 954):
        raise SystemExit(f"make_inputs: {screenshot} is {img.size}, not the 1920x954 facematch screenshot")
    for row in range(6):
        for col in range(18):
            x, y = round(col * 1920 / 18) + 2, 283 + round(row * 112.4)
            yield img.crop((x + 12, y + 14, x + 91, y + 93))


def main():
    if len(sys.argv) < 6 or sys.argv[1] not in SIZES or (sys.argv[3] == "--faces" and sys.argv[5] not in ("cal", "test")):
        raise SystemExit(__doc__)
    model, out = sys.argv[1], sys.argv[2]
    if sys.argv[3] == "--faces":
        calibration = sys.argv[5] == "cal"
        crops = [f for i, f in enumerate(grid_faces(sys.argv[4])) if (i % 3 == 0) == calibration]
        if not calibration:
            crops += [f.transpose(Image.FLIP_LEFT_RIGHT) for f in crops]
    else:
        crops = random_crops(int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:])
    os.makedirs(out, exist_ok=True)
    size = SIZES[model]
    for i, crop in enumerate(crops):
        x = preprocess(model, crop.resize((size, size), Image.BILINEAR))
        np.save(os.path.join(out, f"{i}.npy"), np.ascontiguousarray(x, np.float32))


if __name__ == "__main__":
    main()
