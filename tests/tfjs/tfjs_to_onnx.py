#!/usr/bin/python3
"""A TensorFlow.js graph model (model.json + weight shards) as the ONNX model tf2onnx would give.

    tfjs_to_onnx.py MODEL.json OUT.onnx

The input stays NHWC [1, H, W, C] with a Transpose to NCHW after it, as tf2onnx exports;
inside, 4-D tensors are NCHW (TF's HWIO / depthwise kernels transposed, SAME padding made
explicit from the known shapes), and a 4-D tensor goes back to NHWC before a Reshape or a
graph output. The operators covered are those of Keras CNN classifiers as tfjs-converter
writes them (_FusedConv2D / _FusedMatMul with BiasAdd and an activation, Conv2D,
DepthwiseConv2dNative, pooling, elementwise with constants, Mean, Softmax, Sigmoid, Reshape);
any other operator or fused op stops the conversion with its name. Weights stored as float16
or affine uint8/uint16 ("quantization" in the manifest) are dequantized to float32.
"""
import base64
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
NHWC_TO_NCHW_AXIS = {0: 0, 1: 2, 2: 3, 3: 1}
BINARY = {"AddV2": "Add", "Add": "Add", "BiasAdd": "Add", "Sub": "Sub", "Mul": "Mul", "Minimum": "Min", "Maximum": "Max"}
UNARY = {"Relu": "Relu", "Sigmoid": "Sigmoid", "Tanh": "Tanh"}


def load_weights(model_dir, manifest):
    """name -> float32/int32 array, from the shards in manifest order."""
    data = b"".join(open(os.path.join(model_dir, p), "rb").read() for g in manifest for p in g["paths"])
    weights, offset = {}, 0
    for group in manifest:
        for w in group["weights"]:
            count = int(np.prod(w["shape"])) if w["shape"] else 1
            q = w.get("quantization")
            stored = np.dtype({"float32": np.float32, "int32": np.int32, "float16": np.float16,
                               "uint8": np.uint8, "uint16": np.uint16}[q["dtype"] if q else w["dtype"]])
            raw = np.frombuffer(data, stored, count, offset)
            offset += count * stored.itemsize
            if q and q["dtype"] != "float16":
                raw = raw * np.float32(q["scale"]) + np.float32(q["min"])
            weights[w["name"]] = raw.astype(np.int32 if w["dtype"] == "int32" else np.float32).reshape(w["shape"])
    if offset != len(data):
        raise SystemExit(f"tfjs_to_onnx: the manifest covers {offset} of {len(data)} weight bytes")
    return weights


def attr(node, key, default=None):
    a = node.get("attr", {}).get(key)
    if a is None:
        return default
    if "list" in a:
        lst = a["list"]
        return [base64.b64decode(s).decode() for s in lst.get("s", [])] or [int(i) for i in lst.get("i", [])]
    if "s" in a:
        return base64.b64decode(a["s"]).decode()
    if "i" in a:
        return int(a["i"])
    if "f" in a:
        return float(a["f"])
    return default


def same_pads(size, k, stride, dilation=1):
    """TF SAME padding of one spatial dimension: (before, after, output size)."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + (k - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2, out


class Converter:
    def __init__(self, nodes, weights):
        self.nodes, self.weights = nodes, weights
        self.onnx_nodes, self.inits, self.inputs = [], [], []
        self.values = {}  # TF tensor -> (ONNX name, shape as TF sees it, NCHW?)
        self.count = 0

    def fresh(self, base):
        self.count += 1
        return f"{base}__{self.count}"

    def const(self, base, array):
        name = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def emit(self, op, inputs, base, **attrs):
        out = self.fresh(base)
        self.onnx_nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def value(self, ref):
        """(ONNX name, TF shape, NCHW?) of a node input; constants come back as arrays."""
        name = ref.split(":")[0]
        if name in self.weights:
            return self.weights[name]
        return self.values[name]

    def nhwc(self, v, base):
        name, shape, nchw = v
        return self.emit("Transpose", [name], base + "/to_nhwc", perm=[0, 2, 3, 1]) if nchw else name

    def run(self):
        for n in self.nodes:
            op = n["op"]
            if op == "Const":
                continue
            ins = [i for i in n.get("input", []) if not i.startswith("^")]
            if op in BINARY:
                self.values[n["name"]] = self.binary(n, ins, BINARY[op])
            elif op in UNARY:
                self.values[n["name"]] = self.unary(n, ins, UNARY[op])
            elif hasattr(self, "op_" + op.lstrip("_")):
                self.values[n["name"]] = getattr(self, "op_" + op.lstrip("_"))(n, ins)
            else:
                raise SystemExit(f"tfjs_to_onnx: node '{n['name']}': operator {op} is not covered")

    def op_Placeholder(self, n, _):
        dims = [int(d.get("size", 1)) for d in n["attr"]["shape"]["shape"]["dim"]]
        dims = [1 if d < 0 else d for d in dims]
        self.inputs.append(helper.make_tensor_value_info(n["name"], TensorProto.FLOAT, dims))
        if len(dims) != 4:
            return n["name"], dims, False
        return self.emit("Transpose", [n["name"]], n["name"] + "/to_nchw", perm=[0, 3, 1, 2]), dims, True

    def conv(self, n, x, kernel, depthwise):
        name, shape, _ = x
        kh, kw = kernel.shape[:2]
        if depthwise:  # [kh, kw, C, M] -> [C*M, 1, kh, kw]
            w = kernel.transpose(2, 3, 0, 1).reshape(-1, 1, kh, kw)
            groups = kernel.shape[2]
        else:  # HWIO -> OIHW
            w = kernel.transpose(3, 2, 0, 1)
            groups = shape[3] // kernel.shape[2]
        strides, dilations = attr(n, "strides")[1:3], (attr(n, "dilations") or [1, 1, 1, 1])[1:3]
        if attr(n, "data_format", "NHWC") != "NHWC":
            raise SystemExit(f"tfjs_to_onnx: node '{n['name']}': data_format {attr(n, 'data_format')}")
        pads, out = self.padding(n, shape, (kh, kw), strides, dilations)
        y = self.emit("Conv", [name, self.const(n["name"] + "/w", w)], n["name"], kernel_shape=[kh, kw],
                      strides=strides, dilations=dilations, pads=pads, group=groups)
        return y, [shape[0], out[0], out[1], w.shape[0]], True

    def padding(self, n, shape, k, strides, dilations=(1, 1)):
        kind = attr(n, "padding")
        if kind == "SAME":
            h = same_pads(shape[1], k[0], strides[0], dilations[0])
            w = same_pads(shape[2], k[1], strides[1], dilations[1])
            return [h[0], w[0], h[1], w[1]], (h[2], w[2])
        if kind == "VALID":
            return [0, 0, 0, 0], tuple((shape[1 + i] - (k[i] - 1) * dilations[i] - 1) // strides[i] + 1 for i in range(2))
        raise SystemExit(f"tfjs_to_onnx: node '{n['name']}': padding {kind}")

    def fused(self, n, y, args):
        """BiasAdd, then an activation, of a _Fused* node."""
        name, shape, nchw = y
        for i, f in enumerate(attr(n, "fused_ops") or []):
            if f == "BiasAdd":
                bias = args[i].reshape(-1, 1, 1) if nchw else args[i]
                name = self.emit("Add", [name, self.const(n["name"] + "/bias", bias)], n["name"] + "/bias_add")
            elif f == "Relu":
                name = self.emit("Relu", [name], n["name"] + "/relu")
            elif f == "Relu6":
                name = self.relu6(name, n["name"] + "/relu6")
            elif f == "LeakyRelu":
                name = self.emit("LeakyRelu", [name], n["name"] + "/leaky", alpha=attr(n, "leakyrelu_alpha", 0.2))
            else:
                raise SystemExit(f"tfjs_to_onnx: node '{n['name']}': fused op {f} is not covered")
        return name, shape, nchw

    def op_FusedConv2D(self, n, ins):
        y = self.conv(n, self.value(ins[0]), self.value(ins[1]), depthwise=False)
        return self.fused(n, y, [self.value(i) for i in ins[2:]])

    def op_Conv2D(self, n, ins):
        return self.conv(n, self.value(ins[0]), self.value(ins[1]), depthwise=False)

    def op_DepthwiseConv2dNative(self, n, ins):
        return self.conv(n, self.value(ins[0]), self.value(ins[1]), depthwise=True)

    def op_FusedDepthwiseConv2dNative(self, n, ins):
        y = self.conv(n, self.value(ins[0]), self.value(ins[1]), depthwise=True)
        return self.fused(n, y, [self.value(i) for i in ins[2:]])

    def pool(self, n, ins, op):
        name, shape, _ = self.value(ins[0])
        k, strides = attr(n, "ksize")[1:3], attr(n, "strides")[1:3]
        pads, out = self.padding(n, shape, k, strides)
        extra = {"count_include_pad": 0} if op == "AveragePool" else {}
        y = self.emit(op, [name], n["name"], kernel_shape=k, strides=strides, pads=pads, **extra)
        return y, [shape[0], out[0], out[1], shape[3]], True

    def op_MaxPool(self, n, ins):
        return self.pool(n, ins, "MaxPool")

    def op_AvgPool(self, n, ins):
        return self.pool(n, ins, "AveragePool")

    def binary(self, n, ins, op):
        a, b = self.value(ins[0]), self.value(ins[1])
        if isinstance(a, np.ndarray):
            a, b = b, a  # the operations here commute
            if op == "Sub":
                raise SystemExit(f"tfjs_to_onnx: node '{n['name']}': constant - tensor is not covered")
        name, shape, nchw = a
        if isinstance(b, np.ndarray):
            c = b.astype(np.float32)
            if nchw and c.ndim >= 1 and c.size > 1:  # a per-channel vector over NHWC's last axis
                c = c.reshape(-1, 1, 1)
            other = self.const(n["name"] + "/c", c)
        else:
            if b[2] != nchw:
                raise SystemExit(f"tfjs_to_onnx: node '{n['name']}': operands in different layouts")
            other = b[0]
        return self.emit(op, [name, other], n["name"]), shape, nchw

    def unary(self, n, ins, op, **attrs):
        name, shape, nchw = self.value(ins[0])
        return self.emit(op, [name], n["name"], **attrs), shape, nchw

    def op_Identity(self, n, ins):
        return self.value(ins[0])

    def relu6(self, name, base):
        return self.emit("Clip", [name, self.const("zero", np.float32(0)), self.const("six", np.float32(6))], base)

    def op_Relu6(self, n, ins):
        name, shape, nchw = self.value(ins[0])
        return self.relu6(name, n["name"]), shape, nchw

    def op_Softmax(self, n, ins):
        name, shape, nchw = self.value(ins[0])
        return self.emit("Softmax", [name], n["name"], axis=1 if nchw else -1), shape, nchw

    def op_Mean(self, n, ins):
        name, shape, nchw = self.value(ins[0])
        axes = sorted(int(a) % len(shape) for a in np.atleast_1d(self.value(ins[1])))
        keep = bool(attr(n, "keep_dims", 0))
        onnx_axes = [NHWC_TO_NCHW_AXIS[a] for a in axes] if nchw else axes
        y = self.emit("ReduceMean", [name], n["name"], axes=onnx_axes, keepdims=int(keep))
        out = [1 if i in axes else d for i, d in enumerate(shape)] if keep else [d for i, d in enumerate(shape) if i not in axes]
        if nchw and not keep and sorted(axes) != [1, 2]:
            raise SystemExit(f"tfjs_to_onnx: node '{n['name']}': Mean over axes {axes} is not covered")
        return y, out, nchw and keep

    def op_Reshape(self, n, ins):
        v = self.value(ins[0])
        target = [int(d) for d in self.value(ins[1])]
        x = self.nhwc(v, n["name"])
        size = int(np.prod(v[1]))
        known = int(np.prod([d for d in target if d > 0]))
        shape = [size // known if d < 0 else d for d in target]
        return self.emit("Reshape", [x, self.const(n["name"] + "/shape", np.array(shape, np.int64))], n["name"]), shape, False

    def op_FusedMatMul(self, n, ins):
        name, shape, nchw = self.value(ins[0])
        w = self.value(ins[1])
        if attr(n, "transpose_a", 0) or nchw:
            raise SystemExit(f"tfjs_to_onnx: node '{n['name']}': MatMul of a transposed or 4-D operand")
        if attr(n, "transpose_b", 0):
            w = w.T
        y = self.emit("MatMul", [name, self.const(n["name"] + "/w", w)], n["name"] + "/matmul")
        return self.fused(n, (y, shape[:-1] + [w.shape[1]], False), [self.value(i) for i in ins[2:]])

    def op_MatMul(self, n, ins):
        return self.op_FusedMatMul(n, ins)

    def outputs(self, signature):
        """The signature's outputs, else the non-constant nodes nothing reads; NHWC again."""
        read = {i.split(":")[0].lstrip("^") for n in self.nodes for i in n.get("input", [])}
        wanted = [o["name"].split(":")[0] for o in (signature or {}).get("outputs", {}).values()]
        result = []
        for n in self.nodes:
            if n["name"] not in wanted and (wanted or n["op"] in ("Const", "Placeholder") or n["name"] in read):
                continue
            name, shape, nchw = self.values[n["name"]]
            out = n["name"].replace("/", "_")
            src = self.nhwc((name, shape, nchw), n["name"])
            self.onnx_nodes.append(helper.make_node("Identity", [src], [out], name=out + "/out"))
            result.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, shape))
        return result


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    path, out = sys.argv[1:]
    model = json.load(open(path))
    if model.get("format") != "graph-model":
        raise SystemExit(f"tfjs_to_onnx: {path}: format {model.get('format')}, expected graph-model")
    c = Converter(model["modelTopology"]["node"], load_weights(os.path.dirname(path), model["weightsManifest"]))
    c.run()
    outputs = c.outputs(model.get("signature"))
    graph = helper.make_graph(c.onnx_nodes, os.path.basename(path).split(".")[0], c.inputs, outputs, c.inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="tfjs_to_onnx")
    onnx.checker.check_model(m)
    tmp = out + ".tmp"
    onnx.save(m, tmp)
    os.replace(tmp, out)
    print(f"tfjs_to_onnx: {path} -> {out}: {len(c.onnx_nodes)} nodes, outputs {[o.name for o in outputs]}")


if __name__ == "__main__":
    main()
