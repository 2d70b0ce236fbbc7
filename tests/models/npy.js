// .npy files as onnxruntime-node tensors (C order, little-endian), shared by ort_run.js and
// tests/vad/ort_stream.js.
'use strict';
const fs = require('fs');
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

module.exports = {readNpy, writeNpy};
