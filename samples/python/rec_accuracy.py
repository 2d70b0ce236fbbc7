#!/usr/bin/python3
"""PP-OCR rec accuracy in Python: the float model, the quantized stage model and the compiled .bin
on a labelled set of text lines, CTC-decoded here, compared with the ground truth and with float:
the figures tests/accuracy's ocr_accuracy prints (CER and lines read right, spaces removed).

    rec_accuracy.py --float-model ch_PP-OCRv4_rec_infer.onnx \
        --quantized-model model_output/rec_quantized_model.onnx --bin model_output/rec.bin \
        --data dataset/evaluation/rec --keys ppocr_keys_v1.txt

--data is a folder with labels.json ({"samples": [{"input": "input/000.npy", "text": ...}, ...]},
as scripts/render_ocr_dataset.py writes it); each input is the model's float32 [1, 3, 48, 320].
Needs the openbpu package (docs/python.md) and numpy.
"""

import argparse
import json
import pathlib
import sys

import numpy as np

import openbpu


def load_keys(path):
    """PaddleOCR's CTC classes: the blank, the dictionary's characters, then the space."""
    return [""] + pathlib.Path(path).read_text(encoding="utf-8").splitlines() + [" "]


def ctc_greedy(scores, classes):
    """Best class per time step (the first of equal scores); repeats merged, blanks dropped."""
    best = scores.reshape(-1, scores.shape[-1]).argmax(axis=1)
    keep = (best != 0) & np.concatenate(([True], best[1:] != best[:-1]))
    return "".join(classes[i] for i in best[keep])


def edit_distance(a, b):
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (ca != cb))
    return row[-1]


class Score:
    """Lines read right and character error rate against a reference text, spaces removed."""

    def __init__(self):
        self.lines = self.right = self.edits = self.characters = 0

    def add(self, reference, text, ignore_spaces=True):
        if ignore_spaces:
            reference, text = reference.replace(" ", ""), text.replace(" ", "")
        self.lines += 1
        self.right += text == reference
        self.edits += edit_distance(reference, text)
        self.characters += len(reference)

    def line_accuracy(self):
        return 100 * self.right / self.lines

    def cer(self):
        return 100 * self.edits / self.characters if self.characters else 0.0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--float-model", required=True)
    p.add_argument("--quantized-model", required=True)
    p.add_argument("--bin", required=True)
    p.add_argument("--data", required=True, type=pathlib.Path)
    p.add_argument("--keys", required=True)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()

    classes = load_keys(a.keys)
    samples = json.loads((a.data / "labels.json").read_text(encoding="utf-8"))["samples"]
    float_model = openbpu.Session(a.float_model, threads=a.threads)
    quantized = openbpu.Session(a.quantized_model, threads=a.threads)
    compiled = openbpu.dnn.Model(a.bin)

    truth = {"float": Score(), "quantized": Score(), ".bin": Score()}
    vs_float, equal, equal_ignoring_spaces = Score(), 0, 0
    for s in samples:
        x = np.load(a.data / s["input"])
        texts = {
            "float": ctc_greedy(float_model.run(None, {"x": x})[0], classes),
            "quantized": ctc_greedy(quantized.run(None, {"x": x})[0], classes),
            ".bin": ctc_greedy(compiled.run({"x": x})[0], classes),
        }
        if texts[".bin"] != texts["quantized"]:
            sys.exit(f"sample {s['id']}: the .bin reads '{texts['.bin']}', the quantized model '{texts['quantized']}'")
        for name, text in texts.items():
            truth[name].add(s["text"], text)
        vs_float.add(texts["float"], texts["quantized"], ignore_spaces=False)
        equal += texts["quantized"] == texts["float"]
        equal_ignoring_spaces += texts["quantized"].replace(" ", "") == texts["float"].replace(" ", "")

    n = len(samples)
    print(f"{n} text lines")
    print("vs ground truth (%)   float  quantized   .bin")
    for figure in ("cer", "line_accuracy"):
        print(f"  {figure:<18}" + "".join(f"{getattr(truth[m], figure)():>{w}.2f}"
                                          for m, w in (("float", 7), ("quantized", 11), (".bin", 7))))
    print(f"quantized vs float (%): cer_vs_float {vs_float.cer():.2f} text_equal {100 * equal / n:.2f} "
          f"text_equal_ignoring_spaces {100 * equal_ignoring_spaces / n:.2f}")


if __name__ == "__main__":
    main()
