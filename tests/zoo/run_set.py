#!/usr/bin/python3
"""A model over every input of a held-out set, in one process (the openbpu package's Session).

    run_set.py MODEL SET_DIR OUT_DIR

SET_DIR holds one entry per input, numbered 0, 1, ...: `<i>.npy` for a model of one input, or a
folder `<i>/` with `<input name>.npy` per model input. OUT_DIR/<i>/<output>.npy gets each output,
named as `hb_mapper infer --output-dir` names it. Session runs the float executor as hb_mapper
infer does (tests/python/test_session.py checks the bytes are equal), but loads the model once
for the set instead of once per input.
"""
import os
import sys

import numpy as np

import openbpu

KEEP = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"


def file_name(name):
    """base::safe_file_name: every byte but [A-Za-z0-9._-] becomes '_'."""
    out = "".join(chr(b) if b in KEEP else "_" for b in name.encode())
    return "_" + out if out in ("", ".", "..") else out


def feeds(set_dir, input_names):
    """(index, {input name: array}) for every numbered entry of SET_DIR, in order."""
    entries = {os.path.splitext(e)[0]: e for e in os.listdir(set_dir)}
    for i in sorted((int(k) for k in entries if k.isdigit())):
        path = os.path.join(set_dir, entries[str(i)])
        if os.path.isdir(path):
            yield i, {n: np.load(os.path.join(path, n + ".npy")) for n in input_names}
        elif len(input_names) == 1:
            yield i, {input_names[0]: np.load(path)}
        else:
            sys.exit(f"run_set.py: {path}: a model of {len(input_names)} inputs needs a folder per input")


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model, set_dir, out_dir = sys.argv[1:4]
    with openbpu.Session(model) as session:
        names = session.output_names
        for i, feed in feeds(set_dir, session.input_names):
            os.makedirs(os.path.join(out_dir, str(i)), exist_ok=True)
            for name, value in zip(names, session.run(None, feed)):
                np.save(os.path.join(out_dir, str(i), file_name(name) + ".npy"), value)


if __name__ == "__main__":
    main()
