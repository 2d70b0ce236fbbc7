"""openbpu.convert / check / preprocess_image / write_calibration_data: the same conversion,
placement and preprocessing as the command lines, on small models made here."""

import os
import re
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import openbpu
from conftest import save_model


@pytest.fixture()
def conv_model(tmp_path):
    """Conv → Relu → Conv → TopK: two BPU convolutions and a CPU operator at the tail."""
    rng = np.random.default_rng(3)
    w1 = numpy_helper.from_array(rng.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32), "w1")
    w2 = numpy_helper.from_array(rng.normal(0, 0.3, (4, 8, 1, 1)).astype(np.float32), "w2")
    k = numpy_helper.from_array(np.array([2], dtype=np.int64), "k")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
         helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
         helper.make_node("Conv", ["r1", "w2"], ["y"], name="conv2"),
         helper.make_node("TopK", ["y", "k"], ["top", "top_index"], axis=3, name="topk")], "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8]),
         helper.make_tensor_value_info("top", TensorProto.FLOAT, [1, 4, 8, 2]),
         helper.make_tensor_value_info("top_index", TensorProto.INT64, [1, 4, 8, 2])], [w1, w2, k])
    path = save_model(graph, tmp_path / "conv.onnx")
    cal = tmp_path / "cal_f32"
    cal.mkdir()
    for i in range(4):
        np.save(cal / f"{i}.npy", rng.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32))
    return path


def config_of(model, tmp_path):
    return {
        "model_parameters": {"onnx_model": model, "march": "bayes-e", "working_dir": str(tmp_path / "out"),
                             "output_model_file_prefix": "conv"},
        "input_parameters": {"input_name": "x", "input_type_train": "featuremap", "input_type_rt": "featuremap",
                             "input_layout_train": "NCHW", "norm_type": "no_preprocess"},
        "calibration_parameters": {"calibration_type": "default", "cal_data_dir": str(tmp_path / "cal_f32")},
        "compiler_parameters": {"optimize_level": "O2", "debug": False},
    }


def test_convert_a_dict_and_run_what_it_wrote(conv_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = openbpu.convert(config_of(conv_model, tmp_path))
    out = tmp_path / "out"
    assert result.model_files == [str(out / f"conv{s}") for s in (
        "_original_float_model.onnx", "_optimized_float_model.onnx", "_calibrated_model.onnx",
        "_quantized_model.onnx", ".bin")]
    assert result.log_file == str(tmp_path / "hb_mapper_makertbin.log")
    assert "End Model Convert" in open(result.log_file).read()
    on_bpu = {p.node: p.unit for p in result.nodes}
    assert on_bpu["topk"] == "CPU" and result.subgraph_count == 1
    x = np.random.default_rng(9).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
    expected = openbpu.Session(result.model_files[3]).run(None, {"x": x})
    got = openbpu.dnn.Model(result.model_files[4]).run({"x": x})
    for a, b in zip(got, expected):
        assert a.tobytes() == b.tobytes()


def test_convert_a_yaml_file_as_hb_compile(conv_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = config_of(conv_model, tmp_path)
    cfg["model_parameters"]["march"] = "nash-e"
    lines = []
    for group, keys in cfg.items():
        lines.append(f"{group}:")
        lines += [f"  {k}: '{v}'" for k, v in keys.items()]
    (tmp_path / "conv.yaml").write_text("\n".join(lines) + "\n")
    result = openbpu.convert(tmp_path / "conv.yaml", tool="hb_compile", log_file=str(tmp_path / "compile.log"))
    assert result.model_files[-1] == str(tmp_path / "out" / "conv.hbm") and os.path.exists(result.model_files[-1])
    assert result.log_file == str(tmp_path / "compile.log")


def test_convert_errors_carry_the_log_lines(conv_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = config_of(conv_model, tmp_path)
    cfg["input_parameters"]["norm_type"] = "data_scale_and_mean"
    with pytest.raises(openbpu.Error, match="yaml file parse failed"):
        openbpu.convert(cfg)
    cfg = config_of(conv_model, tmp_path)
    cfg["model_parameters"]["march"] = {"not": "a string"}
    with pytest.raises(openbpu.Error):
        openbpu.convert(cfg)
    cfg["model_parameters"]["march"] = object()
    with pytest.raises(TypeError, match="config key 'model_parameters.march'"):
        openbpu.convert(cfg)
    with pytest.raises(ValueError, match="tool 'hb_foo'"):
        openbpu.convert(config_of(conv_model, tmp_path), tool="hb_foo")
    assert not (tmp_path / "out" / "conv.bin").exists()


def test_check_gives_the_checkers_placement(conv_model, tmp_path, hb_mapper, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = openbpu.check(conv_model, "bayes-e", log_file=str(tmp_path / "check.log"))
    assert result.model_files == []
    units = {p.node: (p.op_type, p.unit, p.subgraph) for p in result.nodes}
    assert units["conv1"] == ("Conv", "BPU", 0) and units["topk"][1:] == ("CPU", -1)
    assert all(p.reason == "" for p in result.nodes if p.unit == "BPU")
    assert all(p.reason != "" for p in result.nodes if p.unit == "CPU")
    cli = subprocess.run([str(hb_mapper), "checker", "--model", conv_model, "--march", "bayes-e"], cwd=tmp_path,
                         check=True, capture_output=True, text=True).stdout
    summary = re.search(r"(\d+) BPU subgraphs?, (\d+) CPU node", cli)
    cpu = sum(p.unit == "CPU" for p in result.nodes)
    assert summary and (int(summary.group(1)), int(summary.group(2))) == (result.subgraph_count, cpu)
    shaped = openbpu.check(conv_model, "bayes-e", input_shape={"x": [1, 3, 16, 16]}, log_file=str(tmp_path / "c2.log"))
    assert [p.node for p in shaped.nodes] == [p.node for p in result.nodes]
    with pytest.raises(openbpu.Error, match="--march 'bayes-x' is not one of"):
        openbpu.check(conv_model, "bayes-x", log_file=str(tmp_path / "c3.log"))


def test_preprocess_image_equals_hb_eval_preprocess(tmp_path, hb_eval_preprocess):
    from PIL import Image

    rng = np.random.default_rng(11)
    images = tmp_path / "images"
    images.mkdir()
    for name, size in (("a", (300, 200)), ("b", (97, 131))):
        Image.fromarray(rng.integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)).save(images / f"{name}.png")
    subprocess.run([str(hb_eval_preprocess), "-m", "mobilenetv1", "-i", str(images), "-o", str(tmp_path / "eval")],
                   check=True, capture_output=True)
    for name in ("a", "b"):
        sample = openbpu.preprocess_image(images / f"{name}.png", recipe="mobilenetv1")
        assert sample.dtype == np.uint8 and sample.tobytes() == (tmp_path / "eval" / f"{name}.bin").read_bytes()
    stretched = openbpu.preprocess_image(str(images / "a.png"), height=32, width=48, input_type_train="bgr",
                                         input_layout_train="NHWC")
    assert stretched.shape == (1, 32, 48, 3)
    rgb = openbpu.preprocess_image(str(images / "a.png"), height=32, width=48)
    assert rgb.shape == (1, 3, 32, 48) and np.array_equal(rgb[0].transpose(1, 2, 0)[..., ::-1], stretched[0])
    files = openbpu.write_calibration_data(sorted(images.glob("*.png")), tmp_path / "cal", height=32, width=48)
    assert files == [str(tmp_path / "cal" / "a.npy"), str(tmp_path / "cal" / "b.npy")]
    assert np.array_equal(np.load(files[0]), rgb)
    with pytest.raises(ValueError, match="recipe 'nope' is not one of"):
        openbpu.preprocess_image(images / "a.png", recipe="nope")
    with pytest.raises(ValueError, match="input_type_train 'nv12'"):
        openbpu.preprocess_image(images / "a.png", height=8, width=8, input_type_train="nv12")
    with pytest.raises(ValueError, match="height and width"):
        openbpu.preprocess_image(images / "a.png")
    with pytest.raises(openbpu.Error, match="missing.png"):
        openbpu.preprocess_image(images / "missing.png", height=8, width=8)


@pytest.mark.parametrize("train,rt", [("rgb", "nv12"), ("bgr", "bgr"), ("yuv444", "yuv444")])
def test_written_calibration_data_calibrates_as_images_do(train, rt, conv_model, tmp_path, monkeypatch):
    """write_calibration_data's folder gives the thresholds calibration computes from the images."""
    from PIL import Image

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(21)
    images = tmp_path / "images"
    images.mkdir()
    for i in range(4):
        Image.fromarray(rng.integers(0, 256, (30 + i, 41, 3), dtype=np.uint8)).save(images / f"{i}.png")
    openbpu.write_calibration_data(sorted(images.glob("*.png")), tmp_path / "samples", height=8, width=8,
                                   input_type_train=train)
    calibrated = []
    for name, folder, preprocess_on in (("images", images, True), ("samples", tmp_path / "samples", False)):
        cfg = config_of(conv_model, tmp_path)
        cfg["model_parameters"]["working_dir"] = str(tmp_path / name)
        cfg["input_parameters"].update({"input_type_train": train, "input_type_rt": rt, "norm_type": "data_scale",
                                        "scale_value": 0.0078125})
        cfg["calibration_parameters"].update({"cal_data_dir": str(folder), "preprocess_on": preprocess_on,
                                              "calibration_type": "max"})
        result = openbpu.convert(cfg, log_file=str(tmp_path / f"{name}.log"))
        calibrated.append(open(result.model_files[2], "rb").read())
    assert calibrated[0] == calibrated[1]


def test_check_on_the_pp_ocr_cls_model(conversion_dir, hb_mapper, tmp_path):
    yaml = (conversion_dir / "cls" / "cls.yaml").read_text()
    model = re.search(r"onnx_model: '([^']+)'", yaml).group(1)
    result = openbpu.check(model, "bayes-e", input_shape={"x": [1, 3, 48, 192]}, log_file=str(tmp_path / "cls.log"))
    cli = subprocess.run([str(hb_mapper), "checker", "--model", model, "--march", "bayes-e", "--input-shape", "x",
                          "1x3x48x192"], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    summary = re.search(r"(\d+) BPU subgraphs?, (\d+) CPU node", cli)
    assert (int(summary.group(1)), int(summary.group(2))) == (result.subgraph_count,
                                                              sum(p.unit == "CPU" for p in result.nodes))
    ops = {p.op_type for p in result.nodes if p.unit == "BPU"}
    assert "Conv" in ops and len(result.nodes) > 50
