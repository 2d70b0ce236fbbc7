"""samples/python/rec_accuracy.py (docs/python.md's example) on the first held-out rec lines: it
runs as written, the .bin reads what the quantized model reads, and its figures are ocr_accuracy's
for the same models and lines."""

import json
import os
import pathlib
import re
import subprocess
import sys

SAMPLE = pathlib.Path(__file__).resolve().parents[2] / "samples" / "python" / "rec_accuracy.py"


def figures(text, pattern):
    return [float(v) for v in re.search(pattern, text, re.M).groups()]


def test_rec_accuracy_sample_prints_ocr_accuracys_figures(conversion_dir, dataset_dir, tmp_path):
    yaml = (conversion_dir / "rec" / "rec.yaml").read_text()
    float_model = pathlib.Path(re.search(r"onnx_model: '([^']+)'", yaml).group(1))
    quantized = conversion_dir / "rec" / "model_output" / "rec_quantized_model.onnx"
    keys = float_model.parent / "ppocr_keys_v1.txt"
    # The first 16 lines, as a data folder of their own.
    rec = dataset_dir / "evaluation" / "rec"
    labels = json.loads((rec / "labels.json").read_text(encoding="utf-8"))
    labels["samples"] = labels["samples"][:16]
    (tmp_path / "labels.json").write_text(json.dumps(labels, ensure_ascii=False), encoding="utf-8")
    os.symlink(rec / "input", tmp_path / "input")

    run = subprocess.run([sys.executable, str(SAMPLE), "--float-model", str(float_model), "--quantized-model",
                          str(quantized), "--bin", str(quantized.parent / "rec.bin"), "--data", str(tmp_path),
                          "--keys", str(keys)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert out.startswith("16 text lines\n"), out
    cer = figures(out, r"^  cer +([\d.]+) +([\d.]+) +([\d.]+)$")
    lines = figures(out, r"^  line_accuracy +([\d.]+) +([\d.]+) +([\d.]+)$")
    assert cer[1] == cer[2] and lines[1] == lines[2], out  # quantized and .bin read the same
    agreement = figures(out, r"cer_vs_float ([\d.]+) text_equal ([\d.]+) text_equal_ignoring_spaces ([\d.]+)$")

    reference = subprocess.run([os.environ["OPENBPU_OCR_ACCURACY"], "--kind", "rec", "--float-model", str(float_model),
                                "--candidate-model", str(quantized), "--data", str(tmp_path), "--keys", str(keys)],
                               capture_output=True, text=True, check=True).stdout
    assert figures(reference, r"^  cer +([\d.]+) +([\d.]+)$") == cer[:2], (out, reference)
    assert figures(reference, r"^  line_accuracy +([\d.]+) +([\d.]+)$") == lines[:2], (out, reference)
    assert figures(reference, r"cer_vs_float ([\d.]+) text_equal ([\d.]+) text_equal_ignoring_spaces ([\d.]+)") \
        == agreement, (out, reference)
