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

const {readNpy, writeNpy} = require('./npy');

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
