#!/usr/bin/env python3
"""An independent NumPy implementation of hb_eval_preprocess's recipes (docs/hb_eval_preprocess.md),
checked byte for byte against the tool's files.
    reference.py TOOL_OUTPUT_DIR IMAGE NAME H W MODE COLOUR LAYOUT [SHORT_SIDE PAD]
MODE: resize | crop | letterbox | padright. Decodes with Pillow (lossless formats only)."""
import math
import os
import sys

import numpy as np
from PIL import Image

out_dir, image, name, H, W, mode, colour, layout = sys.argv[1:9]
H, W = int(H), int(W)
short_side, pad = (int(sys.argv[9]), int(sys.argv[10])) if len(sys.argv) > 10 else (0, 0)
src = np.asarray(Image.open(image).convert("RGB"), dtype=np.float64)
h, w = src.shape[:2]


def llround(x):
    return int(math.floor(x + 0.5))


if mode == "resize":
    rh, rw, oy, ox = H, W, 0, 0
elif mode == "crop":
    scale = short_side / min(h, w)
    rh, rw = max(H, llround(h * scale)), max(W, llround(w * scale))
    oy, ox = -((rh - H) // 2), -((rw - W) // 2)
elif mode == "letterbox":
    scale = min(H / h, W / w)
    rh, rw = min(max(llround(h * scale), 1), H), min(max(llround(w * scale), 1), W)
    oy, ox = (H - rh) // 2, (W - rw) // 2
else:
    rh, rw, oy, ox = H, min(max(math.ceil(H * w / h), 1), W), 0, 0


def axis(dst_len, src_len):
    s = (np.arange(dst_len, dtype=np.float64) + 0.5) * src_len / dst_len - 0.5
    s = np.clip(s, 0.0, src_len - 1)
    i0 = np.floor(s).astype(np.int64)
    return i0, np.minimum(i0 + 1, src_len - 1), s - i0


y0, y1, fy = axis(rh, h)
x0, x1, fx = axis(rw, w)
fx3, fy3 = fx[None, :, None], fy[:, None, None]
top = src[y0][:, x0] * (1 - fx3) + src[y0][:, x1] * fx3
bottom = src[y1][:, x0] * (1 - fx3) + src[y1][:, x1] * fx3
resized = top * (1 - fy3) + bottom * fy3
canvas = np.full((H, W, 3), float(pad))
ys, xs = slice(max(oy, 0), min(oy + rh, H)), slice(max(ox, 0), min(ox + rw, W))
canvas[ys, xs] = resized[ys.start - oy:ys.stop - oy, xs.start - ox:xs.stop - ox]
if colour == "bgr":
    canvas = canvas[:, :, ::-1]
pixels = np.rint(np.clip(canvas, 0, 255)).astype(np.uint8)
if layout == "NCHW":
    pixels = pixels.transpose(2, 0, 1)
stem = os.path.splitext(os.path.basename(image))[0]
tool = np.fromfile(os.path.join(out_dir, stem + ".bin"), np.uint8)
if tool.size != pixels.size or not np.array_equal(tool, pixels.reshape(-1)):
    diff = np.count_nonzero(tool != pixels.reshape(-1)) if tool.size == pixels.size else "size"
    sys.exit("%s %s: the tool's file differs from the reference (%s bytes)" % (name, stem, diff))
