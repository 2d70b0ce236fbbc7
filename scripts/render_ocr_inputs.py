#!/usr/bin/python3
"""Renders realistic inputs for the PP-OCR models: text pages (detection), text lines
(recognition) and upright / rotated text lines (direction classifier), preprocessed the way
PaddleOCR does, written as float32 .npy files.

Deterministic: the same --seed gives byte-identical files. Uses Debian's python3-numpy,
python3-pil and fonts-dejavu-core; the toolchain itself never needs Python.

  render_ocr_inputs.py --out DIR [--det N] [--rec N] [--cls N] [--seed S]
                       [--det-size HxW] [--condition clean|degraded|hard|mixed]
"""
import argparse
import os
import random
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONTS = [
    "DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf",
    "DejaVuSansMono.ttf", "DejaVuSansCondensed.ttf", "DejaVuSerif-Italic.ttf",
]
WORDS = (
    "invoice total amount paid date order number customer address street city phone email "
    "model toolchain quantize calibration board runtime sample output input layer tensor "
    "welcome station platform exit entrance parking open closed monday friday price discount "
    "account balance transfer receipt shipping weight package delivery tracking item quantity "
    "the of and to in is for on with at by from up about into over after"
).split()


def random_text(rng, min_words=2, max_words=6):
    parts = []
    for _ in range(rng.randint(min_words, max_words)):
        r = rng.random()
        if r < 0.15:
            parts.append(str(rng.randint(0, 99999)))
        elif r < 0.22:
            parts.append("%d.%02d" % (rng.randint(0, 999), rng.randint(0, 99)))
        else:
            w = rng.choice(WORDS)
            parts.append(w.capitalize() if rng.random() < 0.3 else w)
    return " ".join(parts)


def font(rng, size):
    return ImageFont.truetype(os.path.join(FONT_DIR, rng.choice(FONTS)), size)


def degrade(img, rng, condition):
    if condition == "mixed":
        condition = rng.choice(["clean", "degraded", "hard"])
    if condition == "clean":
        return img
    arr = np.asarray(img).astype(np.float32)
    if condition in ("degraded", "hard"):
        img = img.filter(ImageFilter.GaussianBlur(radius=rng.uniform(0.3, 1.0 if condition == "degraded" else 1.8)))
        arr = np.asarray(img).astype(np.float32)
        noise = np.random.RandomState(rng.randint(0, 2**31 - 1)).normal(
            0, 6 if condition == "degraded" else 14, arr.shape)
        arr = arr + noise
    if condition == "hard":
        # uneven lighting and lower contrast
        h, w = arr.shape[:2]
        gradient = np.linspace(rng.uniform(0.6, 1.0), rng.uniform(0.6, 1.0), w, dtype=np.float32)
        arr = arr * gradient[None, :, None] * 0.8 + 30
    return Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8))


def colors(rng):
    bg = tuple(rng.randint(180, 255) for _ in range(3))
    fg = tuple(rng.randint(0, 90) for _ in range(3))
    if rng.random() < 0.15:  # light text on dark background
        bg, fg = tuple(255 - c for c in bg), tuple(255 - c for c in fg)
    return bg, fg


def render_page(rng, height, width, condition):
    bg, fg = colors(rng)
    img = Image.new("RGB", (width, height), bg)
    draw = ImageDraw.Draw(img)
    y = rng.randint(10, 40)
    while y < height - 40:
        size = rng.randint(18, 42)
        f = font(rng, size)
        x = rng.randint(10, max(11, width // 4))
        text = random_text(rng, 1, 7)
        draw.text((x, y), text, font=f, fill=fg)
        y += int(size * rng.uniform(1.4, 2.6))
    return degrade(img, rng, condition)


def render_line(rng, condition, min_words=1, max_words=5):
    bg, fg = colors(rng)
    size = rng.randint(28, 44)
    f = font(rng, size)
    text = random_text(rng, min_words, max_words)
    box = f.getbbox(text)
    w, h = box[2] - box[0] + 16, box[3] - box[1] + 12
    img = Image.new("RGB", (w, h), bg)
    ImageDraw.Draw(img).text((8 - box[0], 6 - box[1]), text, font=f, fill=fg)
    return degrade(img, rng, condition), text


def to_bgr_chw(img):
    arr = np.asarray(img.convert("RGB")).astype(np.float32)[:, :, ::-1]  # RGB → BGR (cv2 order)
    return arr.transpose(2, 0, 1)


def det_input(img):
    # PaddleOCR DetResize + NormalizeImage(mean/std in the image's channel order) + ToCHW
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    return ((to_bgr_chw(img) / 255.0 - mean) / std)[None].astype(np.float32)


def line_input(img, height, width):
    # PaddleOCR resize_norm_img: keep aspect ratio, height fixed, pad right with zeros
    w, h = img.size
    new_w = min(width, max(1, int(np.ceil(height * w / float(h)))))
    resized = img.resize((new_w, height), Image.BILINEAR)
    chw = (to_bgr_chw(resized) / 255.0 - 0.5) / 0.5
    out = np.zeros((3, height, width), np.float32)
    out[:, :, :new_w] = chw
    return out[None].astype(np.float32)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--det", type=int, default=3)
    p.add_argument("--rec", type=int, default=3)
    p.add_argument("--cls", type=int, default=3)
    p.add_argument("--seed", type=int, default=20261123)
    p.add_argument("--det-size", default="640x640")
    p.add_argument("--condition", default="mixed", choices=["clean", "degraded", "hard", "mixed"])
    a = p.parse_args()
    try:
        det_h, det_w = (int(v) for v in a.det_size.lower().split("x"))
    except ValueError:
        sys.exit("--det-size must look like 640x640, got %r" % a.det_size)
    os.makedirs(a.out, exist_ok=True)
    rng = random.Random(a.seed)
    manifest = []
    for i in range(a.det):
        arr = det_input(render_page(rng, det_h, det_w, a.condition))
        name = "det_%03d.npy" % i
        np.save(os.path.join(a.out, name), arr)
        manifest.append("%s\tdet\t-" % name)
    for i in range(a.rec):
        img, text = render_line(rng, a.condition)
        name = "rec_%03d.npy" % i
        np.save(os.path.join(a.out, name), line_input(img, 48, 320))
        manifest.append("%s\trec\t%s" % (name, text))
    for i in range(a.cls):
        img, text = render_line(rng, a.condition, 1, 3)
        rotated = rng.random() < 0.5
        if rotated:
            img = img.rotate(180)
        name = "cls_%03d.npy" % i
        np.save(os.path.join(a.out, name), line_input(img, 48, 192))
        manifest.append("%s\tcls\t%s" % (name, "180" if rotated else "0"))
    with open(os.path.join(a.out, "manifest.tsv"), "w") as f:
        f.write("\n".join(manifest) + "\n")


if __name__ == "__main__":
    main()
