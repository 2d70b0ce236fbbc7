#!/usr/bin/python3
"""Two runs of a face model over the same inputs, output by output.

    compare.py A_DIR B_DIR

A_DIR/<i>/<output>.npy and B_DIR/<i>/<output>.npy for every input i (A the reference). Per
output one line: "<output> max_rel=<largest |a - b| / largest |a|> cosine=<mean>/<min>
decision=<agreement %> clear=<agreement % where A decides clearly>/<their count>". The decision
is the arg-max class of an output of several values (a softmax) and value >= 0.5 of a single one
(a sigmoid); A decides clearly when its top two probabilities are 0.1 apart (a sigmoid: 0.05
from 0.5). An embedding (more than 128 values) is compared by cosine only ("decision=-").
"""
import os
import sys

import numpy as np

EMBEDDING = 128
CLEAR = 0.1


def main():
    a_dir, b_dir = sys.argv[1:3]
    runs = sorted(os.listdir(a_dir), key=int)
    for name in sorted(os.listdir(os.path.join(a_dir, runs[0]))):
        diff, peak, cosines, agree, clear, clear_agree = 0.0, 0.0, [], 0, 0, 0
        for i in runs:
            a = np.load(os.path.join(a_dir, i, name)).astype(np.float64).ravel()
            b = np.load(os.path.join(b_dir, i, name)).astype(np.float64).ravel()
            diff, peak = max(diff, float(np.abs(a - b).max())), max(peak, float(np.abs(a).max()))
            denom = np.linalg.norm(a) * np.linalg.norm(b)
            cosines.append(float(a @ b / denom) if denom > 0 else float(np.array_equal(a, b)))
            same = int(np.argmax(a) == np.argmax(b)) if a.size > 1 else int((a[0] >= 0.5) == (b[0] >= 0.5))
            top = np.sort(a)
            margin = top[-1] - top[-2] if a.size > 1 else 2 * abs(a[0] - 0.5)
            agree += same
            if margin >= CLEAR:
                clear, clear_agree = clear + 1, clear_agree + same
        size = np.load(os.path.join(a_dir, runs[0], name)).size
        decision = "-" if size > EMBEDDING else f"{100.0 * agree / len(runs):.1f}"
        sure = "-" if size > EMBEDDING or not clear else f"{100.0 * clear_agree / clear:.1f}/{clear}"
        print(f"{name[:-4]} max_rel={diff / max(peak, 1e-12):.3g} cosine={np.mean(cosines):.6f}/{min(cosines):.6f} "
              f"decision={decision} clear={sure}")


if __name__ == "__main__":
    main()
