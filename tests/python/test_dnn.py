"""openbpu.dnn: the converted PP-OCR .bin models through the hbDNN runtime on the simulator give
hrt_model_exec's bytes; properties as hrt_model_exec model_info prints them; async tasks, ROI
inference, threads and errors."""

import os
import subprocess

import numpy as np
import pytest

import openbpu
from conftest import held_out, run_in_threads


def hrt_infer(hrt_model_exec, model, inputs, out_dir, *extra):
    """hrt_model_exec infer --enable_dump: the output dumps (raw valid bytes), in output order."""
    subprocess.run([str(hrt_model_exec), "infer", "--model_file", str(model), "--input_file", ",".join(map(str, inputs)),
                    "--enable_dump", f"--dump_path={out_dir}", *extra], check=True, capture_output=True)
    return [p.read_bytes() for p in sorted(out_dir.glob("model_infer_output_*.bin"))]


@pytest.fixture(scope="module")
def cls_bin(conversion_dir):
    return str(conversion_dir / "cls" / "model_output" / "cls.bin")


def test_properties(cls_bin):
    with openbpu.dnn.Model(cls_bin) as model:
        assert model.name == "cls" and model.model_names == ["cls"]
        (x,) = model.inputs
        assert (x.name, x.tensor_type, x.layout) == ("x", "HB_DNN_TENSOR_TYPE_F32", "HB_DNN_LAYOUT_NCHW")
        assert x.valid_shape == (1, 3, 48, 192) and x.aligned_shape == (1, 3, 48, 192)
        assert x.stride == [110592, 36864, 768, 4] and x.aligned_byte_size == 110592
        assert x.quanti_type == "NONE" and x.input_source == "ddr" and x.dtype == np.dtype("float32")
        (y,) = model.outputs
        assert y.name == "softmax_0.tmp_0" and y.valid_shape == (1, 2)
        assert model.input_names == ["x"] and model.output_names == ["softmax_0.tmp_0"]
    assert model.closed


@pytest.mark.parametrize("kind", ["cls", "rec"])
def test_outputs_equal_hrt_model_exec_and_the_quantized_model(kind, conversion_dir, dataset_dir, hrt_model_exec,
                                                               tmp_path):
    out = conversion_dir / kind / "model_output"
    model = openbpu.dnn.Model(str(out / f"{kind}.bin"))
    sess = openbpu.Session(str(out / f"{kind}_quantized_model.onnx"))
    for i, npy in enumerate(held_out(dataset_dir, kind, 2)):
        x = np.load(npy)
        raw = model.run({"x": x}, dequantize=False)
        dumps = hrt_infer(hrt_model_exec, out / f"{kind}.bin", [npy], tmp_path / str(i))
        assert [a.tobytes() for a in raw] == dumps
        floats = model.run([x])  # dequantized where the output has a quanti_type
        expected = sess.run(None, {"x": x})
        assert len(floats) == len(expected)
        for got, want in zip(floats, expected):
            assert got.dtype == np.float32 and got.shape == want.shape
            assert got.tobytes() == want.tobytes(), f"{kind}: .bin and quantized model differ"


def test_async_tasks_and_priorities(cls_bin, dataset_dir):
    model = openbpu.dnn.Model([cls_bin], model_name="cls")
    inputs = [np.load(p) for p in held_out(dataset_dir, "cls", 4)]
    expected = [model.run(x)[0] for x in inputs]  # a single array: the only input
    tasks = [model.run_async({"x": x}, priority=p * 60) for p, x in enumerate(inputs)]
    for task, want in zip(tasks, expected):
        (got,) = task.wait()
        assert task.done and got.tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="already returned"):
        tasks[0].wait()
    unwaited = model.run_async({"x": inputs[0]})  # released when dropped
    del unwaited


def test_eight_threads(cls_bin, dataset_dir):
    model = openbpu.dnn.Model(cls_bin)
    inputs = [np.load(p) for p in held_out(dataset_dir, "cls", 8)]
    expected = [model.run(x)[0].tobytes() for x in inputs]

    def work(t):
        for i in range(len(inputs)):
            k = (i + t) % len(inputs)
            assert model.run(inputs[k])[0].tobytes() == expected[k]

    assert not run_in_threads(8, work)


def test_roi_inference_equals_hrt_model_exec(conversion_dir, dataset_dir, hrt_model_exec, tmp_path):
    out = conversion_dir / "cls_resizer" / "model_output"
    model = openbpu.dnn.Model(str(out / "cls_resizer.bin"))
    (x,) = model.inputs
    assert x.input_source == "resizer" and x.tensor_type == "HB_DNN_IMG_TYPE_NV12"
    rng = np.random.default_rng(5)
    image = rng.integers(0, 256, size=(120 * 3 // 2, 200), dtype=np.uint8)  # NV12 of a 200x120 picture
    source = tmp_path / "source.npy"
    np.save(source, image)
    rois = [(0, 0, 199, 119), (10, 20, 105, 67)]
    got = model.run_roi({"x": image}, rois, dequantize=False)
    roi_file = tmp_path / "rois.txt"
    roi_file.write_text("\n".join(" ".join(map(str, r)) for r in rois) + "\n")
    subprocess.run([str(hrt_model_exec), "infer", "--model_file", str(out / "cls_resizer.bin"), "--roi_infer",
                    "--input_file", f"{source},{roi_file}", "--enable_dump", f"--dump_path={tmp_path / 'dump'}"],
                   check=True, capture_output=True)
    for k, array in enumerate(got):
        assert array.shape[0] == 2 * model.outputs[k].valid_shape[0]
        batches = np.split(array, 2)
        for b in range(2):
            dump = tmp_path / "dump" / f"model_infer_output_{k}_{model.outputs[k].name}_roi{b}.bin"
            assert batches[b].tobytes() == dump.read_bytes()
    with pytest.raises(ValueError, match="no ROI given"):
        model.run_roi({"x": image}, [])
    with pytest.raises(ValueError, match=r"is not a source image: .* \(H\*3/2, W\) NV12 with H and W even"):
        model.run_roi({"x": np.ascontiguousarray(image[:, :199])}, rois)


def test_errors(cls_bin, tmp_path):
    model = openbpu.dnn.Model(cls_bin)
    x = np.zeros((1, 3, 48, 192), dtype=np.float32)
    with pytest.raises(ValueError, match=r"input 'x': dtype 'f8' does not match the input's HB_DNN_TENSOR_TYPE_F32"):
        model.run(x.astype(np.float64))
    with pytest.raises(ValueError, match=r"input 'x': shape \(1,3,48,191,\) does not match the input's valid shape"):
        model.run(np.zeros((1, 3, 48, 191), dtype=np.float32))
    with pytest.raises(ValueError, match=r"'y' is not an input of model 'cls' \(its inputs: 'x'\)"):
        model.run({"y": x})
    with pytest.raises(ValueError, match="input 'x' is not fed"):
        model.run({})
    with pytest.raises(ValueError, match="has 1 input\\(s\\); 2 given"):
        model.run([x, x])
    with pytest.raises(ValueError, match="not C-contiguous"):
        model.run(np.zeros((1, 3, 192, 48), dtype=np.float32).transpose(0, 1, 3, 2))
    with pytest.raises(ValueError, match="priority must be 0..255"):
        model.run(x, priority=256)
    with pytest.raises(ValueError, match="has no resizer input"):
        model.run_roi(x, [(0, 0, 1, 1)])
    with pytest.raises(ValueError, match="no model 'det'"):
        openbpu.dnn.Model(cls_bin, model_name="det")
    model.close()
    with pytest.raises(ValueError, match="is closed"):
        model.run(x)
    with pytest.raises(openbpu.Error, match="hbDNNInitializeFromFiles failed"):
        openbpu.dnn.Model(str(tmp_path / "missing.bin"))
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\0" * 64)
    with pytest.raises(openbpu.Error, match="hbDNNInitializeFromFiles failed"):
        openbpu.dnn.Model(str(bad))


def test_packed_file_holds_both_models(conversion_dir, dataset_dir, tmp_path):
    out = conversion_dir
    packed = tmp_path / "ocr.bin"
    subprocess.run([os.environ["OPENBPU_HB_PACK"], str(out / "cls" / "model_output" / "cls.bin"),
                    str(out / "rec" / "model_output" / "rec.bin"), "-o", str(packed)], check=True, capture_output=True)
    with pytest.raises(ValueError, match=r"the files hold several models \('cls', 'rec'\); pass model_name"):
        openbpu.dnn.Model(str(packed))
    for kind in ("cls", "rec"):
        model = openbpu.dnn.Model(str(packed), model_name=kind)
        assert model.model_names == ["cls", "rec"] and model.name == kind
        x = np.load(held_out(dataset_dir, kind, 1)[0])
        alone = openbpu.dnn.Model(str(out / kind / "model_output" / f"{kind}.bin"))
        assert model.run(x, dequantize=False)[0].tobytes() == alone.run(x, dequantize=False)[0].tobytes()
