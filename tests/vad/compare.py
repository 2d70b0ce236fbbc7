#!/usr/bin/python3
"""Frame decisions of voice-activity models: one speech probability per line in each file.

    compare.py REFERENCE.txt FLOAT.txt QUANTIZED.txt

REFERENCE is onnxruntime on the original model, FLOAT our float executor on the optimized model,
QUANTIZED the converted model. Prints on one line: frames, the share of speech frames (p >= 0.5)
in FLOAT, the largest |p_float - p_reference|, and the decision agreement (p >= 0.5 on both or
neither) of FLOAT with REFERENCE and of QUANTIZED with FLOAT, in percent, with the mean
|p_quantized - p_float|.
"""
import sys

import numpy as np


def main():
    ref, flt, qnt = (np.loadtxt(f, ndmin=1) for f in sys.argv[1:4])
    if not (len(ref) == len(flt) == len(qnt)) or len(ref) == 0:
        print(f"compare: frame counts differ or are zero: {len(ref)} {len(flt)} {len(qnt)}")
        return 1
    agree = lambda a, b: 100.0 * np.mean((a >= 0.5) == (b >= 0.5))
    print(f"frames={len(ref)} speech={100.0 * np.mean(flt >= 0.5):.1f} "
          f"float_vs_reference_max={np.max(np.abs(flt - ref)):.2e} "
          f"float_vs_reference_agree={agree(flt, ref):.2f} "
          f"quantized_vs_float_agree={agree(qnt, flt):.2f} "
          f"quantized_vs_float_mean_abs={np.mean(np.abs(qnt - flt)):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
