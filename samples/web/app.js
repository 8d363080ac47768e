// Runs detector.onnx (converted by ir2onnx from detector.xml) on astronaut.png with
// onnxruntime-web's wasm backend and draws the boxes scoring at least THRESHOLD.
// The model takes img[1, 3, H, W]: BGR, 0..255, as the Open Model Zoo's detectors do, and
// returns detection_out[1, 1, N, 7]: image id, label, score, x0, y0, x1, y1 (normalized).
import * as ort from './node_modules/onnxruntime-web/dist/ort.wasm.min.mjs';

const MODEL = 'detector.onnx';
const IMAGE = 'astronaut.png';
const THRESHOLD = 0.5;

ort.env.wasm.numThreads = 1;  // no SharedArrayBuffer needed: any static server will do

function bgrTensor(pixels, width, height) {
  // RGBA bytes (row-major) -> float32 NCHW, channels B, G, R
  const plane = width * height;
  const data = new Float32Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    data[i] = pixels[4 * i + 2];
    data[plane + i] = pixels[4 * i + 1];
    data[2 * plane + i] = pixels[4 * i];
  }
  return new ort.Tensor('float32', data, [1, 3, height, width]);
}

function draw(image, boxes) {
  const view = document.getElementById('view');
  const ctx = view.getContext('2d');
  ctx.drawImage(image, 0, 0, view.width, view.height);
  ctx.lineWidth = 3;
  ctx.font = '16px sans-serif';
  for (const box of boxes) {
    const [x0, y0, x1, y1] = [box.x0 * view.width, box.y0 * view.height, box.x1 * view.width, box.y1 * view.height];
    ctx.strokeStyle = '#00e000';
    ctx.strokeRect(x0, y0, x1 - x0, y1 - y0);
    ctx.fillStyle = '#00e000';
    ctx.fillText(`face ${box.score.toFixed(2)}`, x0 + 4, Math.max(16, y0 - 6));
  }
}

async function main() {
  const image = new Image();
  image.src = IMAGE;
  await image.decode();
  // the image's own pixels, not resampled: the canvas has the image's size
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  ctx.drawImage(image, 0, 0);
  const pixels = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  const input = bgrTensor(pixels, canvas.width, canvas.height);

  const session = await ort.InferenceSession.create(MODEL, { executionProviders: ['wasm'] });
  const start = performance.now();
  const outputs = await session.run({ [session.inputNames[0]]: input });
  const ms = performance.now() - start;
  const rows = outputs[session.outputNames[0]].data;
  const boxes = [];
  for (let i = 0; i + 7 <= rows.length; i += 7) {
    if (rows[i] < 0 || rows[i + 2] < THRESHOLD) continue;  // image id -1 ends the list
    boxes.push({ label: rows[i + 1], score: rows[i + 2], x0: rows[i + 3], y0: rows[i + 4], x1: rows[i + 5], y1: rows[i + 6] });
  }
  draw(image, boxes);
  // a checksum of the input, position-weighted (exact in doubles), so that a test can tell that
  // the browser read the same pixels as it did
  let checksum = 0;
  input.data.forEach((v, i) => { checksum += v * ((i % 97) + 1); });
  document.getElementById('status').textContent =
    `${boxes.length} box(es) at score >= ${THRESHOLD}, inference ${ms.toFixed(1)} ms (onnxruntime-web ${ort.env.versions.web}, wasm)`;
  document.getElementById('result').textContent = JSON.stringify(
    { status: 'done', threshold: THRESHOLD, boxes, input_checksum: checksum, ort_web: ort.env.versions.web, ms });
}

main().catch((error) => {
  document.getElementById('status').textContent = `error: ${error}`;
  document.getElementById('result').textContent = JSON.stringify({ status: 'error', message: String(error) });
});
