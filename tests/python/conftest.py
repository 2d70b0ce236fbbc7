"""Fixtures of the openbpu package's tests: the tools and the converted PP-OCR models of the build
(ctest passes them in the environment, tests/python/CMakeLists.txt) and small ONNX models made
here with the onnx package."""

import os
import pathlib
import subprocess
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper


def _path(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set (run the tests through ctest: tests/python/CMakeLists.txt)")
    return pathlib.Path(value)


@pytest.fixture(scope="session")
def conversion_dir():
    return _path("OPENBPU_CONVERSION_DIR")


@pytest.fixture(scope="session")
def dataset_dir():
    return _path("OPENBPU_DATASET_DIR")


@pytest.fixture(scope="session")
def hb_mapper():
    return _path("OPENBPU_HB_MAPPER")


@pytest.fixture(scope="session")
def hrt_model_exec():
    return _path("OPENBPU_HRT_MODEL_EXEC")


@pytest.fixture(scope="session")
def hb_eval_preprocess():
    return _path("OPENBPU_HB_EVAL_PREPROCESS")


def held_out(dataset_dir, kind, count):
    """The first `count` held-out inputs of a PP-OCR model (the rendered evaluation set)."""
    files = sorted((dataset_dir / "evaluation" / kind / "input").glob("*.npy"))[:count]
    assert len(files) == count, f"fewer than {count} inputs under {dataset_dir}/evaluation/{kind}/input"
    return files


def run_in_threads(count, work):
    """work(t) on `count` threads at once; the exceptions they raised."""
    errors = []

    def guarded(t):
        try:
            work(t)
        except Exception as e:  # noqa: BLE001 (returned to the test)
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def hb_mapper_infer(hb_mapper, model, feeds, out_dir):
    """`hb_mapper infer` on .npy feeds {name: path}: {output name: array}."""
    args = [str(hb_mapper), "infer", "--model-file", str(model), "--output-dir", str(out_dir)]
    for name, path in feeds.items():
        args += ["--input", f"{name}={path}"]
    subprocess.run(args, check=True, capture_output=True)
    return {p.stem: np.load(p) for p in pathlib.Path(out_dir).glob("*.npy")}


def save_model(graph, path, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


@pytest.fixture()
def add_model(tmp_path):
    """y = x + 1 over float32 [1, 4] (the smallest model: binding overhead and leaks)."""
    one = helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["y"], name="add")], "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [one])
    return save_model(graph, tmp_path / "add.onnx")


@pytest.fixture()
def int8_model(tmp_path):
    """An int8 image input (a quantized model's RGB_128): y = float(x), and x passed through."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT, name="cast"),
         helper.make_node("Identity", ["x"], ["x_copy"], name="identity")], "int8_input",
        [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 3, 2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2]),
         helper.make_tensor_value_info("x_copy", TensorProto.INT8, [1, 3, 2, 2])])
    return save_model(graph, tmp_path / "int8_input.onnx")
