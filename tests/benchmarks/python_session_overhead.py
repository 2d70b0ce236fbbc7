#!/usr/bin/python3
"""openbpu.Session.run against the C++ executor on the same model and input, in one run: the
per-sample overhead of the Python package (docs/benchmarks.md, issue bar: ≤ 1.1×).

    PYTHONPATH=build/release/python tests/benchmarks/python_session_overhead.py \
        --hb-mapper build/release/toolchain/cli/hb_mapper --model MODEL.onnx --input x=SAMPLE.npy \
        [--repeat 50] [--rounds 20] [--threads 1]

Each round times `hb_mapper infer --repeat N` (the median of its N runs, the executor alone) and
then N `Session.run` calls (their median, arrays in and out); the rounds alternate so that both
see the same machine. Prints each round, the median of the rounds' ratios and the ratio of the
fastest rounds (machines shared with others change speed between rounds: use many short rounds).
"""

import argparse
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np

import openbpu


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--hb-mapper", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--input", required=True, action="append", help="NAME=FILE.npy, once per input")
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()

    feeds = dict(spec.split("=", 1) for spec in a.input)
    arrays = {name: np.load(path) for name, path in feeds.items()}
    sess = openbpu.Session(a.model, threads=a.threads)
    for _ in range(10):
        sess.run(None, arrays)
    ratios, cpp_rounds, py_rounds = [], [], []
    with tempfile.TemporaryDirectory() as out:
        for r in range(a.rounds):
            args = [a.hb_mapper, "infer", "--model-file", a.model, "--output-dir", out, "--repeat", str(a.repeat),
                    "--threads", str(a.threads)] + [f"--input={s}" for s in a.input]
            text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
            cpp = float(re.search(r", run ([\d.]+) ms \(median", text).group(1))
            times = []
            for _ in range(a.repeat):
                start = time.perf_counter()
                sess.run(None, arrays)
                times.append((time.perf_counter() - start) * 1000)
            py = statistics.median(times)
            ratios.append(py / cpp)
            cpp_rounds.append(cpp)
            py_rounds.append(py)
            print(f"round {r + 1}: C++ executor {cpp:.3f} ms, Session.run {py:.3f} ms, ratio {py / cpp:.3f}")
    print(f"median of the rounds' ratios {statistics.median(ratios):.3f}; fastest round's median, Session.run / "
          f"C++: {min(py_rounds):.3f} / {min(cpp_rounds):.3f} ms = {min(py_rounds) / min(cpp_rounds):.3f} "
          f"({a.rounds} rounds of {a.repeat} runs per side, {a.threads} thread(s))")


if __name__ == "__main__":
    main()
