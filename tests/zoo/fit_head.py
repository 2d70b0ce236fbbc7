#!/usr/bin/python3
"""A trained-like head for a zoo classifier, fitted on its training inputs.

    fit_head.py HB_MAPPER MODEL_DIR NAME

build_zoo.py's heads are at initialisation: their top two logits are nearly tied, so a top-1
flip says little. A trained classifier separates its classes with a margin; this fits one on the
features entering the final layer (the input of the last Gemm, or of MatMul + Add), computed by
the float executor (`hb_mapper infer` on a copy of the float model cut at that tensor) on
MODEL_DIR/train/<i>/ only — never on the calibration or test inputs:
  1. k-means on the centred features (k = min(classes, samples / 8): eight samples per class
     mean; k-means++ from a fixed seed) gives the labels. Centred, not standardized: scaling a
     near-constant feature up to unit spread gives it weights no trained net has, on a signal
     the int8 feature tensor resolves in a step or two.
  2. Nearest class mean as the linear layer, weights the centred class means as in a trained
     net's last layer: logit_c = mu_c . z - |mu_c|^2 / 2. An output with no class gets zero
     weights and the lowest logit the classes give the training set (cross-entropy training
     pushes a class without samples below the others).
  3. One scale for all logits (an inverse temperature), such that the mean softmax top-1
     probability on the training set is 0.9, as confident as a trained net is on its training
     data; then one shift of the biases to a mean logit of 0 (softmax does not see it; trained
     logits centre near 0, and an offset would inflate the output cosine).
The layer's weights and bias are replaced, in their dtype, in MODEL_DIR/NAME.onnx and for an
export form also in reference.onnx (the float32 model it was made from: the same training inputs,
so the same head as its base model); nodes and names stay as they are.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

TARGET_CONFIDENCE = 0.9
SAMPLES_PER_CLASS = 8
COPIES = 16  # inputs per run of the float executor


def final_layer(graph):
    """(feature tensor, weight initializer, weights as [classes, features]?, bias initializer)."""
    inits = {i.name for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    n = producer[graph.output[0].name]
    while n.op_type in ("Identity", "Cast"):
        n = producer[n.input[0]]
    if n.op_type == "Gemm" and n.input[1] in inits and len(n.input) > 2 and n.input[2] in inits:
        trans_b = any(a.name == "transB" and a.i for a in n.attribute)
        return n.input[0], n.input[1], trans_b, n.input[2]
    if n.op_type == "Add":
        bias = next((i for i in n.input if i in inits), None)
        mm = next((producer[i] for i in n.input if i in producer), None)
        if bias and mm is not None and mm.op_type == "MatMul" and mm.input[1] in inits:
            return mm.input[0], mm.input[1], False, bias
    raise SystemExit(f"fit_head: the output comes from {n.op_type} {n.name}, not Gemm or MatMul + Add with a bias")


def feature_model(model, feature, copies):
    """The nodes of `model` that `feature` depends on, `copies` times side by side (tensors and
    inputs suffixed _<copy>, initializers shared), each copy's `feature` an output: one run of
    the float executor computes the features of `copies` inputs."""
    g = model.graph
    producer = {o: n for n in g.node for o in n.output}
    need, stack = set(), [feature]
    while stack:
        n = producer.get(stack.pop())
        if n is not None and n.name not in need:
            need.add(n.name)
            stack.extend(n.input)
    nodes = [n for n in g.node if n.name in need]
    assert not any(a.type == onnx.AttributeProto.GRAPH for n in nodes for a in n.attribute), "no subgraphs"
    typed = onnx.shape_inference.infer_shapes(model).graph.value_info
    out_type = next(v for v in typed if v.name == feature)
    shared = {i.name for i in g.initializer} | {""}
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.graph.node[:], m.graph.input[:], m.graph.output[:], m.graph.value_info[:]
    for c in range(copies):
        rename = lambda t: t if t in shared else f"{t}_{c}"  # noqa: E731
        for n in nodes:
            copy = onnx.NodeProto()
            copy.CopyFrom(n)
            copy.name = f"{n.name}_{c}"
            copy.input[:] = [rename(t) for t in n.input]
            copy.output[:] = [rename(t) for t in n.output]
            m.graph.node.append(copy)
        for i in g.input:
            m.graph.input.add().CopyFrom(i)
            m.graph.input[-1].name = rename(i.name)
        m.graph.output.add().CopyFrom(out_type)
        m.graph.output[-1].name = rename(feature)
    onnx.checker.check_model(m)
    return m


def features(hb_mapper, model, copies, work, samples):
    """One row of features per training input, by the float executor, `copies` inputs a run."""
    path = os.path.join(work, "features.onnx")
    onnx.save(model, path)
    inputs = [i.name.rsplit("_", 1)[0] for i in model.graph.input[:len(model.graph.input) // copies]]
    outputs = [o.name for o in model.graph.output]
    rows = []
    for start in range(0, len(samples), copies):
        batch = samples[start:start + copies]
        assert len(batch) == copies, "the training inputs come in whole runs"
        args = [x for c, s in enumerate(batch) for i in inputs for x in ("--input", f"{i}_{c}={s}/{i}.npy")]
        out = os.path.join(work, str(start))
        subprocess.run([hb_mapper, "infer", "--model-file", path, *args, "--output-dir", out], check=True,
                       stdout=subprocess.DEVNULL)
        rows += [np.load(os.path.join(out, o + ".npy")).astype(np.float64).ravel() for o in outputs]
    return np.stack(rows)


def kmeans(z, k, seed=0, iterations=100):
    """Labels of the rows of z in k clusters: k-means++ initialisation from a fixed seed, Lloyd."""
    rng = np.random.default_rng(seed)
    centres = [z[rng.integers(len(z))]]
    for _ in range(1, k):
        d = np.min([((z - c) ** 2).sum(1) for c in centres], axis=0)
        centres.append(z[rng.choice(len(z), p=d / d.sum())])
    centres = np.array(centres)
    labels = None
    for _ in range(iterations):
        new = np.argmin(((z[:, None, :] - centres[None]) ** 2).sum(2), axis=1)
        if labels is not None and np.array_equal(new, labels):
            break
        labels = new
        centres = np.array([z[labels == c].mean(0) if np.any(labels == c) else centres[c] for c in range(k)])
    return np.unique(labels, return_inverse=True)[1]  # numbered 0.. without a cluster left empty


def fit(x, classes):
    """Weights [classes, features], bias [classes] and training labels of a trained-like head on
    the features x [samples, features] (steps 1-3 above)."""
    mean = x.mean(0)
    z = x - mean
    k = max(2, min(classes, len(x) // SAMPLES_PER_CLASS))
    labels = kmeans(z, k)
    k = labels.max() + 1
    mu = np.array([z[labels == c].mean(0) for c in range(k)])
    w = np.zeros((classes, x.shape[1]))
    b = np.zeros(classes)
    w[:k], b[:k] = mu, -0.5 * (mu ** 2).sum(1)
    logits = z @ w[:k].T + b[:k]
    b[k:] = logits.min()
    logits = z @ w.T + b

    def confidence(scale):
        s = scale * logits
        p = np.exp(s - s.max(1, keepdims=True))
        return (p.max(1) / p.sum(1)).mean()

    lo, hi = 0.0, 1.0  # confidence grows with the scale: bisect
    while confidence(hi) < TARGET_CONFIDENCE:
        lo, hi = hi, 2 * hi
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if confidence(mid) >= TARGET_CONFIDENCE else (mid, hi)
    w, b = hi * w, hi * b
    b -= (z @ w.T + b).mean()
    return w, b - w @ mean, labels  # z = x - mean


def write_head(path, weight, trans_b, bias, w, b):
    model = onnx.load(path)
    for init in model.graph.initializer:
        if init.name in (weight, bias):
            old = numpy_helper.to_array(init)
            value = (w if trans_b else w.T) if init.name == weight else b
            init.CopyFrom(numpy_helper.from_array(value.reshape(old.shape).astype(old.dtype), init.name))
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    hb_mapper, d, name = sys.argv[1:4]
    model_path = os.path.join(d, name + ".onnx")
    float_path = os.path.join(d, "reference.onnx")
    float_path = float_path if os.path.exists(float_path) else model_path
    model = onnx.load(float_path)
    feature, weight, trans_b, bias = final_layer(model.graph)
    classes = numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == bias)).size
    work = os.path.join(d, "head")
    os.makedirs(work, exist_ok=True)
    train = os.path.join(d, "train")
    samples = [os.path.join(train, i) for i in sorted(os.listdir(train), key=int)]
    copies = min(len(samples), COPIES)
    x = features(hb_mapper, feature_model(model, feature, copies), copies, work, samples)
    w, b, labels = fit(x, classes)
    for path in {float_path, model_path}:
        write_head(path, weight, trans_b, bias, w, b)
    sizes = np.bincount(labels)
    print(f"fit_head {name}: {len(x)} samples of {x.shape[1]} features, {len(sizes)} classes of "
          f"{'/'.join(map(str, sizes))} samples")


if __name__ == "__main__":
    main()
