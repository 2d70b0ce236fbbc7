// Runs a Silero VAD model with onnxruntime-node (the reference runtime) over an audio signal
// frame by frame as @ricky0123/vad-web does (v5 and v6: 512-sample frames at 16 kHz, each fed
// as [1, 576] after the last 64 samples of the previous frame (zeros first); state [2, 1, 128]
// from zeros, each frame's stateN the next frame's state) and writes the speech probability of
// each frame, one per line.
//
//   node ort_stream.js MODEL.onnx AUDIO.npy OUT.txt [--frame 512]
//
// onnxruntime-node is resolved from NODE_PATH (scripts/fetch_npm_packages.sh installs it).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const {readNpy} = require(path.join(__dirname, '..', 'models', 'npy'));

(async () => {
  const args = process.argv.slice(2);
  const frameAt = args.indexOf('--frame');
  const frame = frameAt >= 0 ? Number(args.splice(frameAt, 2)[1]) : 512;
  const [model, audioFile, out] = args;
  if (!model || !audioFile || !out) throw new Error('usage: ort_stream.js MODEL AUDIO.npy OUT.txt [--frame N]');
  const session = await ort.InferenceSession.create(model, {intraOpNumThreads: 1, interOpNumThreads: 1});
  const audio = readNpy(audioFile).data;
  const sr = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
  const context = 64;
  let state = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
  const lines = [];
  for (let f = 0; f + frame <= audio.length; f += frame) {
    const withContext = new Float32Array(context + frame);
    if (f > 0) withContext.set(audio.subarray(f - context, f), 0);
    withContext.set(audio.subarray(f, f + frame), context);
    const input = new ort.Tensor('float32', withContext, [1, context + frame]);
    const result = await session.run({input, state, sr});
    lines.push(result.output.data[0].toFixed(6));
    state = result.stateN;
  }
  fs.writeFileSync(out, lines.join('\n') + '\n');
})().catch(e => { console.error(`ort_stream: ${e.message}`); process.exit(1); });
