# Type stubs of the openbpu package (the native module openbpu._openbpu); docs/python.md.
import os
from typing import Mapping, Sequence

import numpy as np

__version__: str

class Error(RuntimeError): ...

class NodeArg:
    name: str
    shape: list[int | str | None]
    type: str  # "tensor(float)", "tensor(int8)", ...

class Session:
    """An ONNX model of the conversion flow on the float executor (HB_ONNXRuntime's calls)."""

    def __init__(self, model_file: str, threads: int = 1) -> None: ...
    @property
    def input_names(self) -> list[str]: ...
    @property
    def output_names(self) -> list[str]: ...
    @property
    def input_shapes(self) -> list[list[int | str | None]]: ...
    @property
    def input_types(self) -> list[np.dtype]: ...
    @property
    def model_file(self) -> str: ...
    @property
    def closed(self) -> bool: ...
    def get_inputs(self) -> list[NodeArg]: ...
    def get_outputs(self) -> list[NodeArg]: ...
    def run(self, output_names: Sequence[str] | None, input_feed: Mapping[str, np.ndarray],
            input_offset: int = 128) -> list[np.ndarray]: ...
    def run_feature(self, output_names: Sequence[str] | None, input_feed: Mapping[str, np.ndarray],
                    input_offset: int = 0) -> list[np.ndarray]: ...
    def close(self) -> None: ...
    def __enter__(self) -> Session: ...
    def __exit__(self, *args: object) -> None: ...

class NodePlacement:
    node: str
    op_type: str
    unit: str  # "BPU" or "CPU"
    subgraph: int
    reason: str

class ConversionResult:
    model_files: list[str]
    nodes: list[NodePlacement]
    subgraph_count: int
    log_file: str

def convert(config: str | os.PathLike[str] | Mapping[str, object], *, tool: str = "hb_mapper",
            model_type: str = "onnx", log_file: str | None = None) -> ConversionResult: ...
def check(model: str, march: str, *, input_shape: Mapping[str, Sequence[int]] = ..., model_type: str = "onnx",
          proto: str = "", log_file: str = "hb_mapper_checker.log") -> ConversionResult: ...
def preprocess_image(image: str | os.PathLike[str], *, recipe: str | None = None, height: int = 0, width: int = 0,
                     input_type_train: str = "rgb", input_layout_train: str = "NCHW") -> np.ndarray: ...
def write_calibration_data(images: Sequence[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *,
                           recipe: str | None = None, height: int = 0, width: int = 0,
                           input_type_train: str = "rgb", input_layout_train: str = "NCHW") -> list[str]: ...

class dnn:
    """hbDNN models (.bin / .hbm) on the simulator."""

    class TensorProperties:
        name: str
        tensor_type: str
        layout: str
        valid_shape: tuple[int, ...]
        aligned_shape: tuple[int, ...]
        stride: list[int]
        aligned_byte_size: int
        quanti_type: str
        quantize_axis: int
        scale: np.ndarray
        zero_point: list[int]
        shift: list[int]
        dtype: np.dtype
        input_source: str

    class Task:
        @property
        def done(self) -> bool: ...
        def wait(self, timeout_ms: int = 0) -> list[np.ndarray]: ...

    class Model:
        def __init__(self, model_files: str | Sequence[str], model_name: str | None = None) -> None: ...
        name: str
        model_names: list[str]
        inputs: list[dnn.TensorProperties]
        outputs: list[dnn.TensorProperties]
        input_names: list[str]
        output_names: list[str]
        closed: bool
        def run(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray] | np.ndarray, dequantize: bool = True,
                priority: int = 0, bpu_core_id: int = 0) -> list[np.ndarray]: ...
        def run_async(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray] | np.ndarray,
                      dequantize: bool = True, priority: int = 0, bpu_core_id: int = 0) -> dnn.Task: ...
        def run_roi(self, inputs: Mapping[str, np.ndarray] | Sequence[np.ndarray] | np.ndarray,
                    rois: Sequence[Sequence[int]], dequantize: bool = True, priority: int = 0,
                    bpu_core_id: int = 0) -> list[np.ndarray]: ...
        def close(self) -> None: ...
        def __enter__(self) -> dnn.Model: ...
        def __exit__(self, *args: object) -> None: ...
