"""openbpu.Session: the stage models of the PP-OCR conversions give hb_mapper infer's outputs bit
for bit; names, shapes and types as ONNX Runtime reports them; bad input raises clear errors;
threads and repeated runs."""

import resource

import numpy as np
import pytest

import openbpu
from conftest import hb_mapper_infer, held_out, run_in_threads, save_model
from onnx import TensorProto, helper

STAGES = ["original_float_model", "optimized_float_model", "calibrated_model", "quantized_model"]


@pytest.mark.parametrize("kind", ["cls", "rec"])
@pytest.mark.parametrize("stage", STAGES)
def test_stage_models_equal_hb_mapper_infer(kind, stage, conversion_dir, dataset_dir, hb_mapper, tmp_path):
    model = conversion_dir / kind / "model_output" / f"{kind}_{stage}.onnx"
    sess = openbpu.Session(str(model))
    assert sess.input_names == ["x"]
    for i, npy in enumerate(held_out(dataset_dir, kind, 2)):
        expected = hb_mapper_infer(hb_mapper, model, {"x": npy}, tmp_path / str(i))
        outputs = sess.run(None, {"x": np.load(npy)})
        assert len(outputs) == len(sess.output_names) == len(expected)
        for name, out in zip(sess.output_names, outputs):
            assert out.dtype == expected[name].dtype and out.shape == expected[name].shape
            assert out.tobytes() == expected[name].tobytes(), f"{kind} {stage} output {name} differs"


def test_names_shapes_and_types(conversion_dir):
    sess = openbpu.Session(str(conversion_dir / "cls" / "model_output" / "cls_quantized_model.onnx"))
    (arg,) = sess.get_inputs()
    assert (arg.name, arg.type, arg.shape) == ("x", "tensor(float)", [1, 3, 48, 192])
    assert sess.input_shapes == [[1, 3, 48, 192]] and sess.input_types == [np.dtype("float32")]
    (out,) = sess.get_outputs()
    assert out.name == sess.output_names[0] and out.type == "tensor(float)" and out.shape == [1, 2]
    assert "NodeArg(name='x'" in repr(arg)


def test_output_selection_and_intermediate_values(add_model):
    sess = openbpu.Session(add_model)
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    for names in (None, [], ["y"]):
        (y,) = sess.run(names, {"x": x})
        assert np.array_equal(y, x + 1)
    (x_back, y) = sess.run(["x", "y"], {"x": x})  # a graph input is a value of the model too
    assert np.array_equal(x_back, x) and not np.shares_memory(x_back, x)
    with pytest.raises(ValueError, match="'z' is not a value of"):
        sess.run(["z"], {"x": x})


def test_inputs_read_in_place_outputs_own_their_buffer(add_model):
    sess = openbpu.Session(add_model)
    x = np.ones((1, 4), dtype=np.float32)
    before = x.copy()
    (y,) = sess.run(None, {"x": x})
    assert np.array_equal(x, before) and not np.shares_memory(x, y)
    assert not y.flags.owndata and y.base is not None  # the executor's buffer, handed over
    del sess
    assert np.array_equal(y, before + 1)  # the output outlives the session


def test_int8_input_offset(int8_model):
    sess = openbpu.Session(int8_model)
    pixels = np.array([0, 1, 127, 128, 129, 200, 254, 255] + [128] * 4, dtype=np.uint8).reshape(1, 3, 2, 2)
    y, copy = sess.run(None, {"x": pixels})  # uint8 pixels: minus 128 (HB_ONNXRuntime's input_offset)
    assert np.array_equal(copy, (pixels.astype(np.int16) - 128).astype(np.int8))
    assert np.array_equal(y, pixels.astype(np.float32) - 128)
    signed = (pixels.astype(np.int16) - 128).astype(np.int8)
    y2, _ = sess.run_feature(None, {"x": signed})  # int8 data is fed as it is
    assert np.array_equal(y, y2)
    with pytest.raises(ValueError, match="uint8 value 128 minus input_offset 0 does not fit"):
        sess.run_feature(None, {"x": pixels})


def test_bad_inputs_raise_clear_errors(add_model):
    sess = openbpu.Session(add_model)
    x = np.zeros((1, 4), dtype=np.float32)
    with pytest.raises(TypeError, match=r"input 'x' takes float32 data \(numpy float32\), not numpy float64"):
        sess.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(ValueError, match=r"input 'x' has shape \(2, 4\); the model takes float32\[1,4\]"):
        sess.run(None, {"x": np.zeros((2, 4), dtype=np.float32)})
    with pytest.raises(ValueError, match=r"'y' is not an input of .*add.onnx \(its inputs: 'x'\)"):
        sess.run(None, {"x": x, "y": x})
    with pytest.raises(ValueError, match=r"input 'x' \(float32\[1,4\]\) is not fed"):
        sess.run(None, {})
    with pytest.raises(ValueError, match="is not C-contiguous"):
        sess.run(None, {"x": np.zeros((1, 8), dtype=np.float32)[:, ::2]})
    with pytest.raises(TypeError, match="must be a numpy.ndarray, not <class 'list'>"):
        sess.run(None, {"x": [[0.0, 0.0, 0.0, 0.0]]})
    with pytest.raises(ValueError, match="threads must be at least 1"):
        openbpu.Session(add_model, threads=0)
    sess.close()
    assert sess.closed
    with pytest.raises(ValueError, match="is closed"):
        sess.run(None, {"x": x})
    with pytest.raises(ValueError, match="is closed"):
        sess.input_names


def test_bad_model_raises_openbpu_error(tmp_path):
    with pytest.raises(openbpu.Error, match="missing.onnx"):
        openbpu.Session(str(tmp_path / "missing.onnx"))
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(openbpu.Error, match="bad.onnx"):
        openbpu.Session(str(bad))
    assert issubclass(openbpu.Error, RuntimeError)


def test_eight_threads_on_one_session(conversion_dir, dataset_dir):
    sess = openbpu.Session(str(conversion_dir / "cls" / "model_output" / "cls_quantized_model.onnx"))
    inputs = [np.load(p) for p in held_out(dataset_dir, "cls", 8)]
    expected = [sess.run(None, {"x": x})[0] for x in inputs]
    results = [[None] * len(inputs) for _ in range(8)]

    def work(t):
        for r in range(3):
            for i in range((t + r) % len(inputs), len(inputs)):
                results[t][i] = sess.run(None, {"x": inputs[i]})[0]

    assert not run_in_threads(8, work)
    for t in range(8):
        for i, out in enumerate(results[t]):
            if out is not None:
                assert out.tobytes() == expected[i].tobytes()


def test_no_leak_over_ten_thousand_runs(tmp_path):
    # 64 KiB in and out: a run that kept its input, its output or the executor's buffer would
    # grow RSS by 640 MB.
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 1024])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 1024])])
    sess = openbpu.Session(save_model(graph, tmp_path / "relu.onnx"))
    x = np.ones((16, 1024), dtype=np.float32)

    def rss_kib():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize() // 1024

    for _ in range(1000):  # warm up: pools, caches
        sess.run(None, {"x": x})
    start = rss_kib()
    for _ in range(10000):
        (y,) = sess.run(None, {"x": x})
    growth = rss_kib() - start
    assert growth < 8 * 1024, f"RSS grew by {growth} KiB over 10,000 runs"
