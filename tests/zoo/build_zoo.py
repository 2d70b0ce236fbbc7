#!/usr/bin/python3
"""The model zoo: small float ONNX models in the shapes users bring, built from seeded weights.

    build_zoo.py OUT_DIR [--full] [--only NAME[,NAME...]] [--calibration N] [--tests N] [--train N] [--classes N]

For each model: OUT_DIR/<name>/<name>.onnx (an export form — float16, dynamic int8, a traced
shape test as If — also reference.onnx, the float32 model it was made from), calibration samples
cal/<input>/<i>.npy, held-out test inputs test/<i>/<input>.npy (later draws of the same
generator), with --train a classifier's training inputs train/<i>/<input>.npy (a generator of
their own: fit_head.py fits a head on them), and a line in OUT_DIR/models.tsv:
    name  kind  inputs  expected_bpu_subgraphs  note
Weights have the statistics of trained networks at initialisation: He-normal convolutions,
BatchNormalization with spread scales, shifts and running statistics (folded into the Conv or
left as a node, as exporters do). Inputs are smooth random images (low-frequency noise), not
white noise. Sizes are small (CI); --full builds the 224x224 shapes the timing model is compared on.
"""
import argparse
import functools
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13


class Builder:
    """A graph under construction: nodes, initializers, unique names, a seeded generator."""

    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.value_info = []  # types ONNX shape inference cannot give (a Loop's outputs)
        self.count = 0
        self.fold_bn = bool(self.rng.integers(0, 2))  # exporters differ: BN folded or a node
        self.classes = 100  # the ImageNet-style classifiers' head (--classes)

    def fresh(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def const(self, base, array):
        name = self.fresh(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, base=None, outputs=1, **attrs):
        names = [self.fresh(base or op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=names[0], **attrs))
        return names[0] if outputs == 1 else names

    def input(self, name, shape, dtype=TensorProto.FLOAT):
        self.inputs.append(helper.make_tensor_value_info(name, dtype, shape))
        return name

    def output(self, value, name):
        self.nodes.append(helper.make_node("Identity", [value], [name], name=name))
        self.outputs.append(name)

    def model(self, opset=OPSET):
        # The outputs' types come from ONNX shape inference over the graph with them as values.
        graph = helper.make_graph(self.nodes, self.name, self.inputs, [], self.inits, value_info=self.value_info)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="openbpu-zoo")
        m.ir_version = 8
        inferred = {v.name: v for v in onnx.shape_inference.infer_shapes(m).graph.value_info}
        m.graph.output.extend(inferred[name] for name in self.outputs)
        onnx.checker.check_model(m)
        return m

    def subgraph(self, name, build, inputs=(), outputs=()):
        """A graph attribute (If branch, Loop body): `build` adds its nodes — they may read this
        graph's values and initializers by name — and returns its output values; `inputs` are
        (name, type, shape), `outputs` (type, shape) in order."""
        saved, self.nodes = self.nodes, []
        results = build()
        nodes, self.nodes = self.nodes, saved
        return helper.make_graph(nodes, name, [helper.make_tensor_value_info(*i) for i in inputs],
                                 [helper.make_tensor_value_info(r, *o) for r, o in zip(results, outputs)])

    # ---- layers

    def conv(self, x, cin, cout, k=3, stride=1, groups=1, act="relu", bn=True, pad=None):
        fan_in = cin // groups * k * k
        w = self.rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // groups, k, k)).astype(np.float32)
        b = np.zeros(cout, np.float32)
        p = k // 2 if pad is None else pad
        attrs = dict(kernel_shape=[k, k], strides=[stride, stride], pads=[p, p, p, p], group=groups)
        if bn:
            gamma = self.rng.uniform(0.5, 1.5, cout).astype(np.float32)
            beta = self.rng.normal(0, 0.2, cout).astype(np.float32)
            mean = self.rng.normal(0, 0.3, cout).astype(np.float32)
            var = self.rng.uniform(0.5, 2.0, cout).astype(np.float32)
            if self.fold_bn:
                s = gamma / np.sqrt(var + 1e-5)
                w = w * s[:, None, None, None]
                b = beta - mean * s
                y = self.node("Conv", [x, self.const("w", w), self.const("b", b)], "conv", **attrs)
            else:
                c = self.node("Conv", [x, self.const("w", w)], "conv", **attrs)
                y = self.node("BatchNormalization",
                              [c, self.const("gamma", gamma), self.const("beta", beta), self.const("mean", mean),
                               self.const("var", var)], "bn", epsilon=1e-5)
        else:
            y = self.node("Conv", [x, self.const("w", w), self.const("b", self.rng.normal(0, 0.1, cout).astype(np.float32))],
                          "conv", **attrs)
        return self.act(y, act)

    def conv3d(self, x, cin, cout, k=3, stride=(1, 1, 1), act="relu"):
        """A 3-D convolution and its BatchNormalization node, as PyTorch exports Conv3d + BatchNorm3d."""
        w = self.rng.normal(0, np.sqrt(2.0 / (cin * k ** 3)), (cout, cin, k, k, k)).astype(np.float32)
        c = self.node("Conv", [x, self.const("w", w)], "conv3d", kernel_shape=[k] * 3, strides=list(stride),
                      pads=[k // 2] * 6)
        y = self.node("BatchNormalization",
                      [c, self.const("gamma", self.rng.uniform(0.5, 1.5, cout).astype(np.float32)),
                       self.const("beta", self.rng.normal(0, 0.2, cout).astype(np.float32)),
                       self.const("mean", self.rng.normal(0, 0.3, cout).astype(np.float32)),
                       self.const("var", self.rng.uniform(0.5, 2.0, cout).astype(np.float32))], "bn", epsilon=1e-5)
        return self.act(y, act)

    def act(self, x, kind):
        if kind is None:
            return x
        if kind == "relu":
            return self.node("Relu", [x])
        if kind == "relu6":
            return self.node("Clip", [x, self.const("lo", np.float32(0)), self.const("hi", np.float32(6))], "relu6")
        if kind == "leaky":
            return self.node("LeakyRelu", [x], alpha=0.1)
        if kind == "silu":
            return self.node("Mul", [x, self.node("Sigmoid", [x])], "silu")
        if kind == "hswish":  # x * relu6(x + 3) / 6, as PyTorch exports before opset 14
            t = self.node("Add", [x, self.const("three", np.float32(3))])
            t = self.node("Clip", [t, self.const("lo", np.float32(0)), self.const("hi", np.float32(6))])
            return self.node("Div", [self.node("Mul", [x, t]), self.const("six", np.float32(6))], "hswish")
        if kind == "hsigmoid":
            return self.node("HardSigmoid", [x], alpha=1.0 / 6, beta=0.5)
        raise ValueError(kind)

    def maxpool(self, x, k=2, s=2, p=0):
        return self.node("MaxPool", [x], kernel_shape=[k, k], strides=[s, s], pads=[p, p, p, p])

    def gap(self, x):
        return self.node("GlobalAveragePool", [x])

    def classifier(self, x, cin, classes):
        f = self.node("Flatten", [self.gap(x)], axis=1)
        w = self.rng.normal(0, np.sqrt(1.0 / cin), (classes, cin)).astype(np.float32)
        return self.node("Gemm", [f, self.const("fc_w", w), self.const("fc_b", np.zeros(classes, np.float32))],
                         "fc", transB=1)

    def sppf(self, x, c):
        """YOLO's SPPF: a 1x1 conv, three chained 5x5 max pools, the four concatenated, a 1x1 conv."""
        s = self.conv(x, c, c // 2, k=1, act="silu")
        m1 = self.maxpool(s, 5, 1, 2)
        m2 = self.maxpool(m1, 5, 1, 2)
        m3 = self.maxpool(m2, 5, 1, 2)
        return self.conv(self.node("Concat", [s, m1, m2, m3], axis=1), 2 * c, c, k=1, act="silu")

    def inverted_residuals(self, y, cin, stages, ch):
        """MobileNetV2 / EfficientNet-Lite stages (expansion, kernel, channels, repeats, stride): 1x1
        expansion, depthwise, 1x1 projection, ReLU6, a residual Add where the shape allows."""
        for e, k, cout, n, s in stages:
            for i in range(n):
                hidden, out, stride = cin * e, ch(cout), s if i == 0 else 1
                z = self.conv(y, cin, hidden, k=1, act="relu6") if e != 1 else y
                z = self.conv(z, hidden, hidden, k=k, stride=stride, groups=hidden, act="relu6")
                z = self.conv(z, hidden, out, k=1, act=None)
                y = self.node("Add", [y, z]) if stride == 1 and cin == out else z
                cin = out
        return y, cin

    def layer_norm(self, v, dim):
        """LayerNorm as PyTorch exports it at opset 13: ReduceMean, Sub, Pow, Sqrt, Div, affine."""
        d = self.node("Sub", [v, self.node("ReduceMean", [v], axes=[-1])])
        var = self.node("ReduceMean", [self.node("Pow", [d, self.const("two", np.float32(2))])], axes=[-1])
        r = self.node("Div", [d, self.node("Sqrt", [self.node("Add", [var, self.const("eps", np.float32(1e-5))])])])
        r = self.node("Mul", [r, self.const("gamma", self.rng.uniform(0.5, 1.5, dim).astype(np.float32))])
        return self.node("Add", [r, self.const("beta", self.rng.normal(0, 0.1, dim).astype(np.float32))])

    def linear(self, v, cin, cout):
        w = self.rng.normal(0, np.sqrt(1.0 / cin), (cin, cout)).astype(np.float32)
        return self.node("Add", [self.node("MatMul", [v, self.const("w", w)]),
                                 self.const("b", self.rng.normal(0, 0.02, cout).astype(np.float32))])

    def gelu(self, v):
        e = self.node("Erf", [self.node("Div", [v, self.const("sqrt2", np.float32(np.sqrt(2)))])])
        return self.node("Mul", [self.node("Mul", [v, self.node("Add", [e, self.const("one", np.float32(1))])]),
                                 self.const("half", np.float32(0.5))])

    def attention(self, h, dim, heads, tokens, causal=False):
        """Multi-head self-attention over [1, tokens, dim]: Q, K, V projections, MatMul, Softmax;
        `causal`: the scores of later tokens masked with Where(mask, scores, -inf), as PyTorch
        exports masked_fill with a constant triangular mask."""
        split = self.const("heads", np.array([1, tokens, heads, dim // heads], np.int64))
        q, k, v = (self.node("Transpose", [self.node("Reshape", [self.linear(h, dim, dim), split])], perm=[0, 2, 1, 3])
                   for _ in range(3))
        s = self.node("MatMul", [q, self.node("Transpose", [k], perm=[0, 1, 3, 2])])
        s = self.node("Mul", [s, self.const("scale", np.float32((dim // heads) ** -0.5))])
        if causal:
            mask = np.tril(np.ones((tokens, tokens), bool)).reshape(1, 1, tokens, tokens)
            s = self.node("Where", [self.const("causal", mask), s, self.const("minus_inf", np.float32(-np.inf))])
        a = self.node("Softmax", [s], axis=-1)
        o = self.node("Transpose", [self.node("MatMul", [a, v])], perm=[0, 2, 1, 3])
        return self.linear(self.node("Reshape", [o, self.const("merge", np.array([1, tokens, dim], np.int64))]), dim, dim)

    def upsample(self, x):
        return self.node("Resize", [x, "", self.const("scales", np.array([1, 1, 2, 2], np.float32))], "up",
                         mode="nearest")


# ---------------------------------------------------------------- models


def resnet(b, size, width, depths, expansion):
    """ResNet v1.5 as torchvision builds it: a 7x7 stem and max pool, four stages of basic blocks
    (two 3x3 convs; expansion 1) or bottlenecks (1x1, 3x3 carrying the stride, 1x1 up to
    `expansion` times the width), a 1x1 projection shortcut where the shape changes, Relu after
    each Add."""
    c = [int(64 * width), int(128 * width), int(256 * width), int(512 * width)]
    x = b.input("input", [1, 3, size, size])
    y = b.conv(x, 3, c[0], k=7, stride=2)
    y = b.maxpool(y, 3, 2, 1)
    cin = c[0]
    for stage, (mid, blocks) in enumerate(zip(c, depths)):
        cout = mid * expansion
        for block in range(blocks):
            stride = 2 if stage > 0 and block == 0 else 1
            if expansion == 1:
                z = b.conv(y, cin, mid, stride=stride)
            else:
                z = b.conv(b.conv(y, cin, mid, k=1), mid, mid, stride=stride)
            z = b.conv(z, mid, cout, k=1 if expansion > 1 else 3, act=None)
            short = y if stride == 1 and cin == cout else b.conv(y, cin, cout, k=1, stride=stride, act=None)
            y = b.node("Relu", [b.node("Add", [z, short])])
            cin = cout
    b.output(b.classifier(y, cin, b.classes), "logits")


def resnet18(b, size, width):
    resnet(b, size, width, (2, 2, 2, 2), 1)


def resnet50(b, size, width):
    resnet(b, size, width, (3, 4, 6, 3), 4)


def scaled_channels(v, width):
    """A channel count times the width multiplier, rounded to a multiple of 8 (MobileNet's rule)."""
    return max(8, int(v * width + 4) // 8 * 8)


def mobilenet_v2(b, size, width):
    ch = functools.partial(scaled_channels, width=width)
    x = b.input("input", [1, 3, size, size])
    y = b.conv(x, 3, ch(32), stride=2, act="relu6")
    stages = [(1, 3, 16, 1, 1), (6, 3, 24, 2, 2), (6, 3, 32, 3, 2), (6, 3, 64, 4, 2), (6, 3, 96, 3, 1), (6, 3, 160, 3, 2),
              (6, 3, 320, 1, 1)]
    y, cin = b.inverted_residuals(y, ch(32), stages, ch)
    y = b.conv(y, cin, ch(1280), k=1, act="relu6")
    b.output(b.classifier(y, ch(1280), b.classes), "logits")


def mobilenet_v3_small(b, size, width):
    ch = functools.partial(scaled_channels, width=width)

    def se(y, c):
        s = b.gap(y)
        s = b.conv(s, c, ch(c // 4), k=1, bn=False, act="relu")
        s = b.conv(s, ch(c // 4), c, k=1, bn=False, act="hsigmoid")
        return b.node("Mul", [y, s], "se")

    x = b.input("input", [1, 3, size, size])
    y = b.conv(x, 3, ch(16), stride=2, act="hswish")
    cin = ch(16)
    cfg = [(3, 16, 16, True, "relu", 2), (3, 72, 24, False, "relu", 2), (3, 88, 24, False, "relu", 1),
           (5, 96, 40, True, "hswish", 2), (5, 240, 40, True, "hswish", 1), (5, 120, 48, True, "hswish", 1),
           (5, 288, 96, True, "hswish", 2), (5, 576, 96, True, "hswish", 1)]
    for k, exp, cout, use_se, act, s in cfg:
        hidden, out = ch(exp), ch(cout)
        z = b.conv(y, cin, hidden, k=1, act=act) if hidden != cin else y
        z = b.conv(z, hidden, hidden, k=k, stride=s, groups=hidden, act=act)
        if use_se:
            z = se(z, hidden)
        z = b.conv(z, hidden, out, k=1, act=None)
        y = b.node("Add", [y, z]) if s == 1 and cin == out else z
        cin = out
    y = b.conv(y, cin, ch(576), k=1, act="hswish")
    b.output(b.classifier(y, ch(576), b.classes), "logits")


def mobilenet_v1(b, size, width):
    """A 3x3 stem and 13 depthwise-separable blocks (3x3 depthwise, 1x1 pointwise, each with BN
    and Relu), as the paper and the Caffe model the reference's samples convert (Keras's has
    ReLU6, which MobileNetV2 here covers): unbounded activations after the depthwise convs."""
    ch = functools.partial(scaled_channels, width=width)
    x = b.input("input", [1, 3, size, size])
    y = b.conv(x, 3, ch(32), stride=2)
    cin = ch(32)
    for cout, stride in [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), *[(512, 1)] * 5, (1024, 2),
                         (1024, 1)]:
        y = b.conv(b.conv(y, cin, cin, stride=stride, groups=cin), cin, ch(cout), k=1)
        cin = ch(cout)
    b.output(b.classifier(y, cin, b.classes), "logits")


def yolov5s(b, size, width):
    c = [int(v * width) for v in (32, 64, 128, 256, 512)]

    def c3(y, cin, cout, n):
        h = cout // 2
        a = b.conv(y, cin, h, k=1, act="silu")
        for _ in range(n):
            a = b.node("Add", [a, b.conv(b.conv(a, h, h, k=1, act="silu"), h, h, act="silu")])
        z = b.conv(y, cin, h, k=1, act="silu")
        return b.conv(b.node("Concat", [a, z], axis=1), 2 * h, cout, k=1, act="silu")

    x = b.input("images", [1, 3, size, size])
    y = b.conv(x, 3, c[0], k=6, stride=2, pad=2, act="silu")
    y = c3(b.conv(y, c[0], c[1], stride=2, act="silu"), c[1], c[1], 1)
    p3 = c3(b.conv(y, c[1], c[2], stride=2, act="silu"), c[2], c[2], 2)
    p4 = c3(b.conv(p3, c[2], c[3], stride=2, act="silu"), c[3], c[3], 3)
    p5 = c3(b.conv(p4, c[3], c[4], stride=2, act="silu"), c[4], c[4], 1)
    p5 = b.sppf(p5, c[4])
    # PAN head: upsample + concat down, stride-2 conv + concat up.
    h5 = b.conv(p5, c[4], c[3], k=1, act="silu")
    u = c3(b.node("Concat", [b.upsample(h5), p4], axis=1), 2 * c[3], c[3], 1)
    h4 = b.conv(u, c[3], c[2], k=1, act="silu")
    o3 = c3(b.node("Concat", [b.upsample(h4), p3], axis=1), 2 * c[2], c[2], 1)
    o4 = c3(b.node("Concat", [b.conv(o3, c[2], c[2], stride=2, act="silu"), h4], axis=1), 2 * c[2], c[3], 1)
    o5 = c3(b.node("Concat", [b.conv(o4, c[3], c[3], stride=2, act="silu"), h5], axis=1), 2 * c[3], c[4], 1)
    for i, (o, ci) in enumerate([(o3, c[2]), (o4, c[3]), (o5, c[4])]):
        b.output(b.conv(o, ci, 3 * 85, k=1, bn=False, act=None), f"head{i}")


def yolov8n(b, size, width):
    """C2f blocks (Split, bottlenecks, Concat), SPPF, upsample + concat neck, decoupled heads
    (the DFL decoding after the heads is left to the application, as the board examples do)."""
    c = [int(v * width) for v in (16, 32, 64, 128, 256)]

    def c2f(y, cin, cout, n, shortcut=True):
        h = cout // 2
        a, z = b.node("Split", [b.conv(y, cin, 2 * h, k=1, act="silu"), b.const("split", np.array([h, h], np.int64))],
                      "split", outputs=2, axis=1)
        parts = [a, z]
        for _ in range(n):
            t = b.conv(b.conv(parts[-1], h, h, act="silu"), h, h, act="silu")
            parts.append(b.node("Add", [parts[-1], t]) if shortcut else t)
        return b.conv(b.node("Concat", parts, axis=1), (2 + n) * h, cout, k=1, act="silu")

    x = b.input("images", [1, 3, size, size])
    y = b.conv(x, 3, c[0], stride=2, act="silu")
    y = c2f(b.conv(y, c[0], c[1], stride=2, act="silu"), c[1], c[1], 1)
    p3 = c2f(b.conv(y, c[1], c[2], stride=2, act="silu"), c[2], c[2], 2)
    p4 = c2f(b.conv(p3, c[2], c[3], stride=2, act="silu"), c[3], c[3], 2)
    p5 = c2f(b.conv(p4, c[3], c[4], stride=2, act="silu"), c[4], c[4], 1)
    p5 = b.sppf(p5, c[4])
    n4 = c2f(b.node("Concat", [b.upsample(p5), p4], axis=1), c[4] + c[3], c[3], 1, False)
    n3 = c2f(b.node("Concat", [b.upsample(n4), p3], axis=1), c[3] + c[2], c[2], 1, False)
    n4 = c2f(b.node("Concat", [b.conv(n3, c[2], c[2], stride=2, act="silu"), n4], axis=1), c[2] + c[3], c[3], 1, False)
    n5 = c2f(b.node("Concat", [b.conv(n4, c[3], c[3], stride=2, act="silu"), p5], axis=1), c[3] + c[4], c[4], 1, False)
    for i, (f, ci) in enumerate([(n3, c[2]), (n4, c[3]), (n5, c[4])]):
        box = b.conv(b.conv(b.conv(f, ci, 64, act="silu"), 64, 64, act="silu"), 64, 64, k=1, bn=False, act=None)
        cls = b.conv(b.conv(b.conv(f, ci, 80, act="silu"), 80, 80, act="silu"), 80, 80, k=1, bn=False, act=None)
        b.output(box, f"box{i}")
        b.output(cls, f"cls{i}")


def efficientnet_lite0(b, size, width):
    """MBConv blocks with ReLU6 and no squeeze-excitation (the Lite variant for accelerators)."""
    ch = functools.partial(scaled_channels, width=width)
    x = b.input("input", [1, 3, size, size])
    y = b.conv(x, 3, ch(32), stride=2, act="relu6")
    stages = [(1, 3, 16, 1, 1), (6, 3, 24, 2, 2), (6, 5, 40, 2, 2), (6, 3, 80, 3, 2), (6, 5, 112, 3, 1), (6, 5, 192, 4, 2),
              (6, 3, 320, 1, 1)]
    y, cin = b.inverted_residuals(y, ch(32), stages, ch)
    y = b.conv(y, cin, 1280, k=1, act="relu6")
    b.output(b.classifier(y, 1280, b.classes), "logits")


def vit_tiny(b, size, width):
    """A ViT: 4x4 patch embedding (16x16 at full size), pre-norm blocks with LayerNorm as PyTorch exports it at opset 13
    (ReduceMean, Sub, Pow, Sqrt, Div), multi-head attention (MatMul, Softmax), GELU (erf form),
    mean pooling. Softmax runs on the CPU of bayes-e unless run_on_bpu names it (the reference's
    default too), so each block's attention splits the BPU work: blocks + 1 subgraphs."""
    dim, heads, blocks = int(128 * width), 2, 2
    patch = 4 if size <= 64 else 16
    tokens = (size // patch) ** 2
    x = b.input("input", [1, 3, size, size])
    p = b.conv(x, 3, dim, k=patch, stride=patch, pad=0, bn=False, act=None)
    t = b.node("Transpose", [b.node("Reshape", [p, b.const("shape", np.array([1, dim, tokens], np.int64))])], perm=[0, 2, 1])

    for _ in range(blocks):
        t = b.node("Add", [t, b.attention(b.layer_norm(t, dim), dim, heads, tokens)])
        t = b.node("Add", [t, b.linear(b.gelu(b.linear(b.layer_norm(t, dim), dim, 4 * dim)), 4 * dim, dim)])
    pooled = b.node("ReduceMean", [b.layer_norm(t, dim)], axes=[1], keepdims=0)
    b.output(b.linear(pooled, dim, 100), "logits")


def bert_tiny(b, size, width):
    """A BERT-style encoder over token ids: an int64 [1, T] input into the word-embedding Gather
    (on the CPU: its indices are data, as on the reference), learned position embeddings,
    post-norm blocks (attention, GELU MLP) with LayerNorm as PyTorch exports it at opset 13, the
    first ([CLS]) token into a classifier."""
    dim, heads, blocks, vocab = int(128 * width), 2, 2, 1000
    ids = b.input("input_ids", [1, size], TensorProto.INT64)
    words = b.rng.normal(0, 0.5, (vocab, dim)).astype(np.float32)
    t = b.node("Gather", [b.const("word_embeddings", words), ids], axis=0)
    t = b.node("Add", [t, b.const("position_embeddings", b.rng.normal(0, 0.5, (1, size, dim)).astype(np.float32))])
    t = b.layer_norm(t, dim)
    for _ in range(blocks):
        t = b.layer_norm(b.node("Add", [t, b.attention(t, dim, heads, size)]), dim)
        t = b.layer_norm(b.node("Add", [t, b.linear(b.gelu(b.linear(t, dim, 4 * dim)), 4 * dim, dim)]), dim)
    cls = b.node("Gather", [t, b.const("cls", np.array(0, np.int64))], axis=1)  # [1, dim]
    b.output(b.linear(b.node("Tanh", [b.linear(cls, dim, dim)]), dim, 2), "logits")


def causal_transformer(b, size, width):
    """A causal (decoder-style) transformer over feature frames, as streaming speech models are
    built: a [1, T, 40] input, a linear embedding, pre-norm blocks whose attention masks later
    frames with Where(triangular mask, scores, -inf), the last frame into a classifier. The Where
    runs on the BPU; its -inf fill stands in as the lowest value of the scores' scale."""
    dim, heads, blocks = int(64 * width), 2, 2
    x = b.input("features", [1, size, 40])
    t = b.linear(x, 40, dim)
    for _ in range(blocks):
        t = b.node("Add", [t, b.attention(b.layer_norm(t, dim), dim, heads, size, causal=True)])
        t = b.node("Add", [t, b.linear(b.gelu(b.linear(b.layer_norm(t, dim), dim, 2 * dim)), 2 * dim, dim)])
    last = b.node("Gather", [b.layer_norm(t, dim), b.const("last", np.array(size - 1, np.int64))], axis=1)
    b.output(b.linear(last, dim, 12), "logits")


def video_3dcnn(b, size, width):
    """A C3D-style action classifier on a clip [1, 3, 8, size, size]: three 3x3x3 Conv3d + BatchNorm3d
    + ReLU (strided in space, then in time too), mean over time and space, a linear layer.
    conv3d_as_conv2d runs each as 2-D convolutions per depth tap on the BPU."""
    c = [int(v * width) for v in (32, 64, 128)]
    frames = 8
    x = b.input("clip", [1, 3, frames, size, size])
    y = b.conv3d(x, 3, c[0], stride=(1, 2, 2))
    y = b.conv3d(y, c[0], c[1], stride=(2, 2, 2))
    y = b.conv3d(y, c[1], c[2], stride=(2, 2, 2))
    voxels = (frames // 4) * (size // 8) ** 2
    y = b.node("Reshape", [y, b.const("flat", np.array([1, c[2], voxels], np.int64))])
    pooled = b.node("ReduceMean", [y], axes=[2], keepdims=0)
    w = b.rng.normal(0, np.sqrt(1.0 / c[2]), (c[2], 10)).astype(np.float32)
    b.output(b.node("Add", [b.node("MatMul", [pooled, b.const("fc", w)]), b.const("fcb", np.zeros(10, np.float32))]),
             "logits")


def audio_cnn(b, size, width):
    """A keyword spotter on raw audio: a [1, samples] input, 1-D convolutions and max pooling
    (Conv / MaxPool over [N, C, L], which stage 2 runs as 2-D ones over H = 1), mean over time."""
    c = [int(v * width) for v in (16, 32, 64)]
    x = b.input("audio", [1, size])
    y = b.node("Unsqueeze", [x, b.const("axes", np.array([1], np.int64))])
    cin = 1
    for i, cout in enumerate(c):
        k, stride = (9, 4) if i == 0 else (5, 1)
        w = b.rng.normal(0, np.sqrt(2.0 / (cin * k)), (cout, cin, k)).astype(np.float32)
        y = b.node("Conv", [y, b.const("w", w), b.const("b", b.rng.normal(0, 0.1, cout).astype(np.float32))],
                   kernel_shape=[k], strides=[stride], pads=[k // 2, k // 2])
        y = b.node("MaxPool", [b.node("Relu", [y])], kernel_shape=[2], strides=[2])
        cin = cout
    pooled = b.node("ReduceMean", [y], axes=[2], keepdims=0)
    w = b.rng.normal(0, np.sqrt(1.0 / cin), (cin, 12)).astype(np.float32)
    b.output(b.node("Add", [b.node("MatMul", [pooled, b.const("fc", w)]), b.const("fcb", np.zeros(12, np.float32))]),
             "scores")


def small_cnn(b, size, width):
    """Three convolutions and a classifier (the base of the shape-test export below)."""
    c = int(32 * width)
    x = b.input("input", [1, 3, size, size])
    y = b.conv(x, 3, c, stride=2)
    y = b.conv(b.conv(y, c, 2 * c, stride=2), 2 * c, 2 * c)
    b.output(b.classifier(y, 2 * c, 10), "logits")


def unet(b, size, width):
    c = [int(v * width) for v in (32, 64, 128, 256)]
    x = b.input("input", [1, 3, size, size])
    skips, y, cin = [], x, 3
    for cout in c:
        y = b.conv(b.conv(y, cin, cout), cout, cout)
        skips.append(y)
        y = b.maxpool(y)
        cin = cout
    y = b.conv(b.conv(y, cin, 2 * cin), 2 * cin, 2 * cin)
    cin = 2 * cin
    for cout, skip in zip(reversed(c), reversed(skips)):
        if cout == c[0]:  # the last stage upsamples by a transposed convolution, the others by Resize
            w = b.rng.normal(0, np.sqrt(2.0 / (cin * 4)), (cin, cout, 2, 2)).astype(np.float32)
            u = b.node("ConvTranspose", [y, b.const("wt", w), b.const("bt", np.zeros(cout, np.float32))],
                       "deconv", kernel_shape=[2, 2], strides=[2, 2])
        else:
            u = b.conv(b.upsample(y), cin, cout, k=1)
        y = b.node("Concat", [u, skip], axis=1)
        y = b.conv(b.conv(y, 2 * cout, cout), cout, cout)
        cin = cout
    b.output(b.conv(y, cin, 2, k=1, bn=False, act=None), "mask")


def wakeword(b, size, width):
    """A tf2onnx-style keyword spotter: NHWC [1, T, F, 1] input, Conv + LeakyRelu, elementwise Max
    of two branches, MaxPool."""
    f = [int(v * width) for v in (16, 32, 64)]
    x = b.input("mfcc", [1, size, 40, 1])
    y = b.node("Transpose", [x], perm=[0, 3, 1, 2])
    cin = 1
    for cout in f:
        a = b.conv(y, cin, cout, act="leaky")
        c = b.conv(y, cin, cout, k=1, act="leaky")
        y = b.maxpool(b.node("Max", [b.conv(a, cout, cout, act="leaky"), c]))
        cin = cout
    b.output(b.classifier(y, cin, 12), "scores")


def recurrent_weights(b, gates, cin, hidden):
    """W, R, B of a one-direction ONNX recurrent layer, PyTorch's initialisation U(±1/√H)."""
    k = 1.0 / np.sqrt(hidden)
    w = b.rng.uniform(-k, k, (1, gates * hidden, cin)).astype(np.float32)
    r = b.rng.uniform(-k, k, (1, gates * hidden, hidden)).astype(np.float32)
    bias = b.rng.uniform(-k, k, (1, 2 * gates * hidden)).astype(np.float32)
    return b.const("w", w), b.const("r", r), b.const("b", bias)


def conv1d_stack(b, y, cin, stages):
    """Conv1d + Relu + MaxPool stages over [N, C, L]: (channels, kernel, stride, pool) each."""
    for cout, k, stride, pool in stages:
        w = b.rng.normal(0, np.sqrt(2.0 / (cin * k)), (cout, cin, k)).astype(np.float32)
        y = b.node("Conv", [y, b.const("w", w), b.const("b", b.rng.normal(0, 0.1, cout).astype(np.float32))],
                   kernel_shape=[k], strides=[stride], pads=[k // 2, k // 2])
        y = b.node("MaxPool", [b.node("Relu", [y])], kernel_shape=[pool], strides=[pool])
        cin = cout
    return y, cin


def gru_kws(b, size, width):
    """A keyword spotter on raw audio: 1-D convolutions down to frames, a GRU over them as PyTorch
    exports it (time-major, linear_before_reset=1), its last state into a classifier."""
    hidden = int(64 * width)
    x = b.input("audio", [1, size])
    y = b.node("Unsqueeze", [x, b.const("axes", np.array([1], np.int64))])
    y, c = conv1d_stack(b, y, 1, [(int(32 * width), 9, 4, 4), (int(64 * width), 5, 2, 4), (int(64 * width), 3, 1, 2)])
    seq = b.node("Transpose", [y], perm=[2, 0, 1])  # [T, 1, C]
    _, last = b.node("GRU", [seq, *recurrent_weights(b, 3, c, hidden)], outputs=2, hidden_size=hidden,
                     linear_before_reset=1)
    last = b.node("Squeeze", [last, b.const("axes", np.array([0], np.int64))])
    w = b.rng.normal(0, np.sqrt(1.0 / hidden), (hidden, 12)).astype(np.float32)
    b.output(b.node("Add", [b.node("MatMul", [last, b.const("fc", w)]), b.const("fcb", np.zeros(12, np.float32))]),
             "scores")


def crnn(b, size, width):
    """A text recogniser in CRNN's shape (PP-OCR's older rec models): a CNN down to one row of
    columns, a bidirectional LSTM over the columns (Y of both directions), per-column class
    scores."""
    c = [int(v * width) for v in (32, 64, 128)]
    hidden, classes = int(48 * width), 37
    x = b.input("image", [1, 3, 32, size])
    y = b.maxpool(b.conv(x, 3, c[0]))
    y = b.maxpool(b.conv(y, c[0], c[1]))
    y = b.node("MaxPool", [b.conv(y, c[1], c[2])], kernel_shape=[8, 1], strides=[8, 1])  # [1, C, 1, W/4]
    seq = b.node("Transpose", [b.node("Squeeze", [y, b.const("axes", np.array([2], np.int64))])], perm=[2, 0, 1])
    k = 1.0 / np.sqrt(hidden)
    w = b.const("w", b.rng.uniform(-k, k, (2, 4 * hidden, c[2])).astype(np.float32))
    r = b.const("r", b.rng.uniform(-k, k, (2, 4 * hidden, hidden)).astype(np.float32))
    bias = b.const("b", b.rng.uniform(-k, k, (2, 8 * hidden)).astype(np.float32))
    ys = b.node("LSTM", [seq, w, r, bias], hidden_size=hidden, direction="bidirectional")  # [T, 2, 1, H]
    t = size // 4
    feats = b.node("Reshape", [b.node("Transpose", [ys], perm=[0, 2, 1, 3]),
                               b.const("shape", np.array([t, 1, 2 * hidden], np.int64))])
    fc = b.rng.normal(0, np.sqrt(1.0 / (2 * hidden)), (2 * hidden, classes)).astype(np.float32)
    b.output(b.node("MatMul", [feats, b.const("fc", fc)]), "logits")


def lstm_state(b, size, width):
    """A streaming voice-activity detector in Silero VAD v5's shape: an audio chunk and a [2, 1, H]
    state (h and c stacked) in, a speech probability and the next state out; 1-D convolutions,
    mean over time, one LSTM step."""
    hidden = int(64 * width)
    x = b.input("input", [1, size])
    state = b.input("state", [2, 1, hidden])
    y = b.node("Unsqueeze", [x, b.const("axes", np.array([1], np.int64))])
    y, c = conv1d_stack(b, y, 1, [(int(32 * width), 16, 8, 2), (int(64 * width), 5, 2, 2)])
    frame = b.node("Transpose", [b.node("ReduceMean", [y], axes=[2])], perm=[2, 0, 1])  # [1, 1, C]
    h0, c0 = (b.node("Gather", [state, b.const("index", np.array([i], np.int64))], axis=0) for i in (0, 1))
    _, h, cell = b.node("LSTM", [frame, *recurrent_weights(b, 4, c, hidden), "", h0, c0], outputs=3, hidden_size=hidden)
    w = b.rng.normal(0, np.sqrt(1.0 / hidden), (hidden, 1)).astype(np.float32)
    logit = b.node("MatMul", [b.node("Squeeze", [h, b.const("axes", np.array([0], np.int64))]), b.const("fc", w)])
    b.output(b.node("Sigmoid", [logit]), "output")
    b.output(b.node("Concat", [h, cell], axis=0), "stateN")


def scripted_branch(b, size, width):
    """A data-dependent branch as torch.jit.script exports it (`if y.mean() > 0: sharpen(y) else:
    smooth(y)`): an If on a computed condition, convolutions in both branches. control_flow_flattening
    computes both branches on the BPU and a Where on the CPU picks (docs/passes.md)."""
    c = int(32 * width)
    x = b.input("input", [1, 3, size, size])
    y = b.conv(x, 3, c, stride=2, act=None)
    cond = b.node("Greater", [b.node("ReduceMean", [y], keepdims=0), b.const("zero", np.float32(0))])
    y = b.conv(b.act(y, "relu"), c, c)
    half = [1, c, size // 2, size // 2]
    sharpen = b.subgraph("sharpen", lambda: [b.conv(y, c, c)], outputs=[(TensorProto.FLOAT, half)])
    smooth = b.subgraph("smooth", lambda: [b.conv(y, c, c, act="hsigmoid")], outputs=[(TensorProto.FLOAT, half)])
    y = b.node("If", [cond], then_branch=sharpen, else_branch=smooth)
    y = b.conv(y, c, 2 * c, stride=2)
    b.output(b.classifier(y, 2 * c, 10), "logits")


def loop_refinement(b, size, width):
    """Refinement steps with shared weights, as torch.jit.script exports `for _ in range(3): y = y +
    block(y)`: a Loop with a constant trip count whose body reads the main graph's weights by name;
    unrolled onto the BPU."""
    c = int(32 * width)
    x = b.input("input", [1, 3, size, size])
    y = b.conv(x, 3, c, stride=2)
    half = [1, c, size // 2, size // 2]

    def body():
        r = b.conv(b.conv("y_in", c, c), c, c, act=None)
        return [b.node("Identity", ["go_in"]), b.node("Add", ["y_in", r])]

    step = b.subgraph("refine", body, inputs=[("i", TensorProto.INT64, []), ("go_in", TensorProto.BOOL, []),
                                              ("y_in", TensorProto.FLOAT, half)],
                      outputs=[(TensorProto.BOOL, []), (TensorProto.FLOAT, half)])
    y = b.node("Loop", [b.const("steps", np.array(3, np.int64)), b.const("go", np.array(True)), y], body=step)
    b.value_info.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, half))
    y = b.conv(y, c, 2 * c, stride=2)
    b.output(b.classifier(y, 2 * c, 10), "logits")


def loop_while(b, size, width):
    """A while loop on data (`while y.abs().max() > 4: y = y * 0.5`, at most 8 times): the Loop stays
    on the CPU in float with its body, between two BPU subgraphs; the .bin holds its graph."""
    c = int(32 * width)
    x = b.input("input", [1, 3, size, size])
    y = b.conv(b.conv(x, 3, c, stride=2), c, c, act=None)
    half = [1, c, size // 2, size // 2]
    limit = b.const("limit", np.float32(4))
    big = lambda v: b.node("Greater", [b.node("ReduceMax", [b.node("Abs", [v])], keepdims=0), limit])

    def body():
        shrunk = b.node("Mul", ["y_in", b.const("half", np.float32(0.5))])
        return [big(shrunk), shrunk]

    step = b.subgraph("shrink", body, inputs=[("i", TensorProto.INT64, []), ("go_in", TensorProto.BOOL, []),
                                             ("y_in", TensorProto.FLOAT, half)],
                      outputs=[(TensorProto.BOOL, []), (TensorProto.FLOAT, half)])
    y = b.node("Loop", [b.const("at_most", np.array(8, np.int64)), big(y), y], body=step)
    b.value_info.append(helper.make_tensor_value_info(y, TensorProto.FLOAT, half))
    y = b.conv(y, c, 2 * c, stride=2)
    b.output(b.classifier(y, 2 * c, 10), "logits")


# ---------------------------------------------------------------- export forms


def to_shape_if(model):
    """The first Relu as a traced shape test leaves it (`if x.numel() > 16: relu(y) else: -y`,
    with another such If inside the taken branch): If nodes whose condition folds to a constant
    from the static input shape (stage 2's if_inlining takes the branch)."""
    g = model.graph
    relu = next(n for n in g.node if n.op_type == "Relu")
    y, out = relu.input[0], relu.output[0]

    def branch(op, name):
        return helper.make_graph([helper.make_node(op, [y], [name], name=name)], name + "_graph", [],
                                 [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)])

    inner = helper.make_node("If", ["shape_cond"], ["inner_if_out"], name="inner_if",
                             then_branch=branch("Relu", "if_relu"), else_branch=branch("Sigmoid", "if_sigmoid"))
    then_g = helper.make_graph([inner], "then_graph", [],
                               [helper.make_tensor_value_info("inner_if_out", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Size", [g.input[0].name], ["input_size"], name="input_size"),
             helper.make_node("Greater", ["input_size", "size_limit"], ["shape_cond"], name="shape_cond"),
             helper.make_node("If", ["shape_cond"], [out], name="shape_if", then_branch=then_g,
                              else_branch=branch("Neg", "if_neg"))]
    g.initializer.append(numpy_helper.from_array(np.int64(16), "size_limit"))
    k = list(g.node).index(relu)
    g.node.remove(relu)
    for n in reversed(nodes):
        g.node.insert(k, n)
    onnx.checker.check_model(model)
    return model



def to_float16(model):
    """A half-precision export of `model`: float16 initializers (Resize scales stay float32, as
    ONNX requires), a Cast to float16 after each input and back to float32 before each output."""
    g = model.graph
    keep32 = {n.input[2] for n in g.node if n.op_type == "Resize" and len(n.input) > 2}
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT and init.name not in keep32:
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name))
    casts = []
    for inp in g.input:
        half = inp.name + "_fp16"
        for n in g.node:
            for k, name in enumerate(n.input):
                if name == inp.name:
                    n.input[k] = half
        casts.append(helper.make_node("Cast", [inp.name], [half], name=half, to=TensorProto.FLOAT16))
    for out in g.output:
        half = out.name + "_fp16"
        for n in g.node:
            for k, name in enumerate(n.output):
                if name == out.name:
                    n.output[k] = half
        g.node.append(helper.make_node("Cast", [half], [out.name], name=out.name + "_cast", to=TensorProto.FLOAT))
    for i, c in enumerate(casts):
        g.node.insert(i, c)
    del g.value_info[:]
    onnx.checker.check_model(model)
    return model


def to_dynamic_int8(model):
    """ONNX Runtime's quantize_dynamic form of `model`'s Convs: DynamicQuantizeLinear on the input
    (uint8), int8 weights with one scale per tensor, ConvInteger, Cast, Mul by the two scales,
    Add of the bias."""
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    nodes, dql = [], {}
    for n in g.node:
        if n.op_type != "Conv" or n.input[1] not in inits:
            nodes.append(n)
            continue
        x = n.input[0]
        if x not in dql:
            dql[x] = [x + "_dq_q", x + "_dq_scale", x + "_dq_zero"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], dql[x], name=x + "_dql"))
        w = numpy_helper.to_array(inits[n.input[1]])
        scale = np.float32(max(np.abs(w).max(), 1e-8) / 127)
        wq = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        base = n.name
        g.initializer.extend([numpy_helper.from_array(wq, base + "_wq"), numpy_helper.from_array(np.int8(0), base + "_wz"),
                              numpy_helper.from_array(scale, base + "_ws")])
        q, s, z = dql[x]
        nodes.append(helper.make_node("Mul", [s, base + "_ws"], [base + "_sprod"], name=base + "_sprod"))
        nodes.append(helper.make_node("ConvInteger", [q, base + "_wq", z, base + "_wz"], [base + "_int"], name=base + "_int",
                                      **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
        nodes.append(helper.make_node("Cast", [base + "_int"], [base + "_float"], name=base + "_cast", to=TensorProto.FLOAT))
        out = n.output[0] if len(n.input) < 3 else base + "_nobias"
        nodes.append(helper.make_node("Mul", [base + "_float", base + "_sprod"], [out], name=base + "_mul"))
        if len(n.input) >= 3:
            bias = numpy_helper.to_array(inits[n.input[2]]).reshape(1, -1, 1, 1)
            g.initializer.append(numpy_helper.from_array(bias, base + "_bias4d"))
            nodes.append(helper.make_node("Add", [out, base + "_bias4d"], [n.output[0]], name=base + "_bias"))
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    kept = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)
    onnx.checker.check_model(model)
    return model


MODELS = {
    # name: (builder, kind, small size, full size, width small, width full, BPU subgraphs)
    "resnet18": (resnet18, "classifier", 64, 224, 0.25, 1.0, 1),
    "mobilenet_v2": (mobilenet_v2, "classifier", 64, 224, 0.5, 1.0, 1),
    "mobilenet_v3_small": (mobilenet_v3_small, "classifier", 64, 224, 0.5, 1.0, 1),
    "yolov5s": (yolov5s, "detector", 128, 640, 0.25, 0.5, 1),
    "unet": (unet, "segmenter", 64, 256, 0.25, 1.0, 1),
    "wakeword": (wakeword, "classifier", 48, 98, 0.5, 1.0, 1),
    "yolov8n": (yolov8n, "detector", 128, 640, 0.5, 1.0, 1),
    "efficientnet_lite0": (efficientnet_lite0, "classifier", 64, 224, 0.5, 1.0, 1),
    "vit_tiny": (vit_tiny, "classifier", 32, 224, 0.5, 1.5, 3),
    "audio_cnn": (audio_cnn, "classifier", 4000, 16000, 0.5, 1.0, 1),
    "gru_kws": (gru_kws, "classifier", 4000, 16000, 0.5, 1.0, 1),
    "crnn": (crnn, "segmenter", 64, 320, 0.5, 1.0, 1),
    "lstm_state": (lstm_state, "detector", 512, 512, 0.5, 1.0, 1),
    "small_cnn_shape_if": (small_cnn, "classifier", 32, 224, 1.0, 1.0, 1, to_shape_if),
    "bert_tiny": (bert_tiny, "classifier", 16, 128, 1.0, 1.0, 3),
    "resnet50": (resnet50, "classifier", 64, 224, 0.25, 1.0, 1),
    "mobilenet_v1": (mobilenet_v1, "classifier", 64, 224, 0.5, 1.0, 1),
    "scripted_branch": (scripted_branch, "classifier", 64, 224, 0.5, 1.0, 2),
    "loop_refinement": (loop_refinement, "classifier", 64, 224, 0.5, 1.0, 1),
    "loop_while": (loop_while, "classifier", 64, 224, 0.5, 1.0, 2),
    "causal_transformer": (causal_transformer, "classifier", 16, 100, 1.0, 1.0, 3),
    "video_3dcnn": (video_3dcnn, "classifier", 32, 112, 0.5, 1.0, 1),
    # Export forms of the models above: the reference outputs are the float32 model's.
    "resnet18_fp16": (resnet18, "classifier", 64, 224, 0.25, 1.0, 1, to_float16),
    "mobilenet_v3_small_dynamic": (mobilenet_v3_small, "classifier", 64, 224, 0.5, 1.0, 1, to_dynamic_int8),
}


def smooth_input(rng, shape):
    """Low-frequency noise in about [-2, 2]: a coarse grid upsampled, plus a little fine noise."""
    if len(shape) == 5:  # a clip: smooth frames
        n, c, d, h, w = shape
        return smooth_input(rng, [n, c * d, h, w]).reshape(shape)
    if len(shape) != 4:
        return rng.normal(0, 1, shape).astype(np.float32)
    n, c, h, w = shape
    coarse = rng.normal(0, 1, (n, c, max(2, h // 8), max(2, w // 8)))
    ys = np.linspace(0, coarse.shape[2] - 1, h)
    xs = np.linspace(0, coarse.shape[3] - 1, w)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, coarse.shape[2] - 1), np.minimum(x0 + 1, coarse.shape[3] - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    img = (coarse[:, :, y0][:, :, :, x0] * (1 - fy) * (1 - fx) + coarse[:, :, y1][:, :, :, x0] * fy * (1 - fx) +
           coarse[:, :, y0][:, :, :, x1] * (1 - fy) * fx + coarse[:, :, y1][:, :, :, x1] * fy * fx)
    return (img + rng.normal(0, 0.1, shape)).astype(np.float32)


def sample_input(rng, name, inp, shape):
    """One input of the model's kind: a smooth image (drawn first, whatever the kind, so that
    every split keeps its values), NHWC planes, token ids or a recurrent state."""
    data = smooth_input(rng, shape)
    if name == "wakeword":  # NHWC: time x feature planes
        data = smooth_input(rng, [1, 1, shape[1], shape[2]]).transpose(0, 2, 3, 1)
    if inp == "input_ids":  # token ids of the vocabulary, [CLS] first
        data = np.concatenate([[[1]], rng.integers(2, 1000, (1, shape[1] - 1))], axis=1).astype(np.int64)
    if inp == "state":  # a recurrent state: h and c of earlier chunks, within ±1
        data = np.tanh(rng.normal(0, 0.5, shape)).astype(np.float32)
    return data


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--full", action="store_true")
    p.add_argument("--only", default="")
    p.add_argument("--calibration", type=int, default=8)
    p.add_argument("--tests", type=int, default=20)
    p.add_argument("--train", type=int, default=0)
    p.add_argument("--classes", type=int, default=100, help="classes of the ImageNet-style classifiers' head")
    a = p.parse_args()
    names = [n for n in MODELS if not a.only or n in a.only.split(",")]
    os.makedirs(a.out, exist_ok=True)
    rows = []
    for name in names:
        build, kind, small, full, w_small, w_full, subgraphs, *export = MODELS[name]
        base = next(n for n, m in MODELS.items() if m[0] is build)  # an export form: its model's seed
        seed = list(MODELS).index(base) + 1  # the same model whichever subset is built
        b = Builder(name, seed)
        b.classes = a.classes
        build(b, full if a.full else small, w_full if a.full else w_small)
        model = b.model()
        d = os.path.join(a.out, name)
        os.makedirs(d, exist_ok=True)
        if export:
            onnx.save(model, os.path.join(d, "reference.onnx"))
            model = export[0](model)
        onnx.save(model, os.path.join(d, name + ".onnx"))
        shapes = {i.name: [x.dim_value for x in i.type.tensor_type.shape.dim] for i in model.graph.input}
        splits = [("cal", a.calibration, 1000), ("test", a.tests, 1000)]  # one generator, cal first
        if kind == "classifier" and a.train:
            splits.append(("train", a.train, 2000))  # fit_head.py's inputs: a generator of their own
        rngs = {offset: np.random.default_rng(offset + seed) for offset in (1000, 2000)}
        for split, count, offset in splits:
            for i in range(count):
                for inp, shape in shapes.items():
                    sub = os.path.join(d, split, inp) if split == "cal" else os.path.join(d, split, str(i))
                    os.makedirs(sub, exist_ok=True)
                    data = sample_input(rngs[offset], name, inp, shape)
                    np.save(os.path.join(sub, f"{i}.npy" if split == "cal" else f"{inp}.npy"), data)
        rows.append(f"{name}\t{kind}\t{';'.join(shapes)}\t{subgraphs}\t{len(model.graph.node)} nodes")
    with open(os.path.join(a.out, "models.tsv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    print(f"build_zoo: {len(rows)} models in {a.out}")


if __name__ == "__main__":
    sys.exit(main())
