"""OpenBPU from Python: the conversion flow's models and the compiled models, on numpy.

- ``Session``: any ONNX model of the flow (original, optimized, calibrated, quantized) on the
  float executor, with HB_ONNXRuntime's and ONNX Runtime's calls.
- ``dnn.Model``: a .bin / .hbm model through the hbDNN runtime on the simulator.
- ``convert`` / ``check``: hb_mapper makertbin / hb_compile and hb_mapper checker.
- ``preprocess_image`` / ``write_calibration_data``: calibration samples from images, by the
  toolchain's own preprocessing.

Errors of a model, node, file or runtime call raise ``openbpu.Error`` (a RuntimeError); mistakes
in the arguments raise ValueError or TypeError. docs/python.md has a complete example.
"""

from ._openbpu import (  # noqa: F401  (the package's API)
    ConversionResult,
    Error,
    NodeArg,
    NodePlacement,
    Session,
    check,
    convert,
    dnn,
    preprocess_image,
    write_calibration_data,
)
from ._version import __version__  # noqa: F401

__all__ = [
    "ConversionResult",
    "Error",
    "NodeArg",
    "NodePlacement",
    "Session",
    "__version__",
    "check",
    "convert",
    "dnn",
    "preprocess_image",
    "write_calibration_data",
]
