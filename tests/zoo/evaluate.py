#!/usr/bin/python3
"""Float vs quantized outputs of one zoo model over its held-out test inputs.

    evaluate.py KIND FLOAT_DIR QUANT_DIR

FLOAT_DIR/<i>/<output>.npy and QUANT_DIR/<i>/<output>.npy for every test input i. Prints
"cosine=<min over inputs and outputs> mean_cosine=<mean> top1=<agreement %|-> gap=<median
(top-1 − top-2 logit) / std of the logits of the float model, or ->" on one line.
"""
import os
import sys

import numpy as np


def main():
    kind, float_dir, quant_dir = sys.argv[1:4]
    cosines, agree, total, gaps = [], 0, 0, []
    for i in sorted(os.listdir(float_dir), key=int):
        for name in sorted(os.listdir(os.path.join(float_dir, i))):
            f = np.load(os.path.join(float_dir, i, name)).astype(np.float64).ravel()
            q = np.load(os.path.join(quant_dir, i, name)).astype(np.float64).ravel()
            denom = np.linalg.norm(f) * np.linalg.norm(q)
            cosines.append(float(f @ q / denom) if denom > 0 else float(np.array_equal(f, q)))
            if kind == "classifier":
                agree += int(np.argmax(f) == np.argmax(q))
                total += 1
                top = np.sort(f)
                gaps.append((top[-1] - top[-2]) / max(f.std(), 1e-12))
    top1 = f"{100.0 * agree / total:.1f}" if total else "-"
    gap = f"{np.median(gaps):.3f}" if gaps else "-"
    print(f"cosine={min(cosines):.6f} mean_cosine={np.mean(cosines):.6f} top1={top1} gap={gap}")


if __name__ == "__main__":
    main()
