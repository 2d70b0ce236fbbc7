// The original TensorFlow.js graph model on TensorFlow.js itself (CPU backend): the reference
// that tfjs_to_onnx.py's ONNX model is checked against.
//   node tfjs_run.js MODEL.json OUT_DIR INPUT.npy...
// Writes OUT_DIR/<i>/<output>.npy for the i-th input (output names as tfjs_to_onnx.py gives
// them: the node name with '/' as '_'), float32, in TensorFlow's layout.
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs-core');
require('@tensorflow/tfjs-backend-cpu');
const tfconv = require('@tensorflow/tfjs-converter');

function readNpy(file) {
  const buf = fs.readFileSync(file);
  const headerLen = buf.readUInt16LE(8);
  const header = buf.toString('latin1', 10, 10 + headerLen);
  if (!header.includes("'descr': '<f4'") || header.includes("'fortran_order': True"))
    throw new Error(`${file}: expected a C-order float32 .npy`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + headerLen, buf.byteOffset + buf.length));
  return tf.tensor(data, shape);
}

function writeNpy(file, data, shape) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head.writeUInt8(1, 6);
  head.writeUInt8(0, 7);
  head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(Float32Array.from(data).buffer)]));
}

async function main() {
  const [modelPath, outDir, ...inputs] = process.argv.slice(2);
  const json = JSON.parse(fs.readFileSync(modelPath, 'utf8'));
  const shards = json.weightsManifest.flatMap((g) => g.paths.map((p) => fs.readFileSync(path.join(path.dirname(modelPath), p))));
  const weights = Buffer.concat(shards);
  await tf.setBackend('cpu');
  const model = await tfconv.loadGraphModel(tf.io.fromMemory({
    modelTopology: json.modelTopology,
    weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
    weightData: weights.buffer.slice(weights.byteOffset, weights.byteOffset + weights.length),
    signature: json.signature,
  }));
  const nodes = json.modelTopology.node;
  const read = new Set(nodes.flatMap((n) => (n.input || []).map((i) => i.replace(/^\^/, '').split(':')[0])));
  const signed = Object.values((json.signature || {}).outputs || {}).map((o) => o.name.split(':')[0]);
  const outputs = signed.length ? nodes.filter((n) => signed.includes(n.name)).map((n) => n.name)
    : nodes.filter((n) => n.op !== 'Const' && n.op !== 'Placeholder' && !read.has(n.name)).map((n) => n.name);
  const inputName = nodes.find((n) => n.op === 'Placeholder').name;
  inputs.forEach((file, i) => {
    const x = readNpy(file);
    const ys = model.execute({ [inputName]: x }, outputs);
    fs.mkdirSync(path.join(outDir, String(i)), { recursive: true });
    (Array.isArray(ys) ? ys : [ys]).forEach((y, k) => {
      writeNpy(path.join(outDir, String(i), `${outputs[k].replace(/\//g, '_')}.npy`), y.dataSync(), y.shape);
      y.dispose();
    });
    x.dispose();
  });
}

main().catch((e) => { console.error(`tfjs_run: ${e.message}`); process.exit(1); });
