// Runs an ONNX model with onnxruntime-node (the reference runtime) on .npy inputs, writes one
// <output>.npy per model output and prints a JSON line with the timings.
//
//   node ort_run.js --model M.onnx --input NAME=FILE.npy [--input ...] --output-dir DIR
//                   [--threads N] [--repeat N] [--warmup N]
//
// onnxruntime-node is resolved from NODE_PATH (scripts/fetch_npm_packages.sh installs it into
// $OPENBPU_CACHE/npm/node_modules).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const DTYPES = {
  '<f4': ['float32', Float32Array], '<f8': ['float64', Float64Array],
  '|i1': ['int8', Int8Array], '|u1': ['uint8', Uint8Array], '|b1': ['bool', Uint8Array],
  '<i2': ['int16', Int16Array], '<u2': ['uint16', Uint16Array],
  '<i4': ['int32', Int32Array], '<u4': ['uint32', Uint32Array],
  '<i8': ['int64', BigInt64Array], '<u8': ['uint64', BigUint64Array],
};

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const headerLen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${file}: Fortran order not supported`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map(s => s.trim())
      .filter(s => s.length).map(Number);
  const [type, Ctor] = DTYPES[descr] || [];
  if (!type) throw new Error(`${file}: unsupported dtype ${descr}`);
  const dataStart = start + headerLen;
  const bytes = buf.subarray(dataStart);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new ort.Tensor(type, new Ctor(copy.buffer, 0, bytes.length / Ctor.BYTES_PER_ELEMENT), shape);
}

function writeNpy(file, tensor) {
  const entry = Object.entries(DTYPES).find(([, [t]]) => t === tensor.type);
  if (!entry) throw new Error(`cannot write ${tensor.type} as .npy`);
  const dims = tensor.dims;
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${entry[0]}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1; prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
  fs.writeFileSync(file + '.tmp', Buffer.concat([prefix, Buffer.from(header, 'latin1'), data]));
  fs.renameSync(file + '.tmp', file);
}

function parseArgs(argv) {
  const a = {inputs: [], threads: 1, repeat: 1, warmup: 0};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    if (k === '--model') { a.model = v; i++; }
    else if (k === '--input') { a.inputs.push(v); i++; }
    else if (k === '--output-dir') { a.outputDir = v; i++; }
    else if (k === '--threads') { a.threads = Number(v); i++; }
    else if (k === '--repeat') { a.repeat = Number(v); i++; }
    else if (k === '--warmup') { a.warmup = Number(v); i++; }
    else throw new Error(`unknown argument ${k}`);
  }
  if (!a.model) throw new Error('--model is required');
  return a;
}

function safeName(name) { return name.replace(/[^A-Za-z0-9._-]/g, '_'); }

(async () => {
  const a = parseArgs(process.argv.slice(2));
  const session = await ort.InferenceSession.create(a.model, {
    intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const spec of a.inputs) {
    const eq = spec.indexOf('=');
    feeds[spec.slice(0, eq)] = readNpy(spec.slice(eq + 1));
  }
  for (let i = 0; i < a.warmup; i++) await session.run(feeds);
  const times = [];
  let out;
  for (let i = 0; i < a.repeat; i++) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (a.outputDir) {
    fs.mkdirSync(a.outputDir, {recursive: true});
    for (const name of session.outputNames) writeNpy(path.join(a.outputDir, safeName(name) + '.npy'), out[name]);
  }
  times.sort((x, y) => x - y);
  console.log(JSON.stringify({model: path.basename(a.model), threads: a.threads,
    median_ms: times[Math.floor(times.length / 2)], min_ms: times[0], runs: times.length}));
})().catch(e => { console.error(`ort_run: ${e.message}`); process.exit(1); });
