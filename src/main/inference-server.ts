// `bin/matte inference-server --port N`: the segmentation model served over the Open Inference Protocol
// (KServe v2 / Triton HTTP, with Triton's binary tensor extension), under the model name `isnet`, on
// onnxruntime: for CPU inference boxes without Triton, and for tests. A Triton server given deploy/triton/
// serves the same ONNX file under the same name and protocol.
//   GET  /v2/health/live, /v2/health/ready, /v2/models/isnet, /v2/models/isnet/ready
//   POST /v2/models/isnet/infer   input `input` FP32 [1,3,1024,1024] → output `output` FP32 [1,1,1024,1024]
import Fastify from 'fastify';
import ort from 'onnxruntime-node';
import { createSession, readModel } from '../adapters/model-session.mjs';
import { MODEL_INPUT_SIZE, modelSource } from '../adapters/mask-model.adapter.ts';
import { readInferBody, tensorsOf, type Tensors } from '../adapters/oip-mask-model.adapter.ts';
import { loadConfig, modelRunOptions } from '../config.ts';

export const MODEL_NAME = 'isnet';
const SIZE = MODEL_INPUT_SIZE;
const INPUT_VALUES = 3 * SIZE * SIZE;

export async function startInferenceServer(port: number, host: string) {
  const config = loadConfig();
  const session = await createSession(ort, readModel(modelSource(config.modelPath)), modelRunOptions(config));
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024 });
  app.addContentTypeParser('application/octet-stream', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  const bad = (reply: import('fastify').FastifyReply, error: string) => reply.code(400).send({ error });
  const metadata = {
    name: MODEL_NAME,
    versions: ['1'],
    platform: 'onnxruntime_onnx',
    inputs: [{ name: 'input', datatype: 'FP32', shape: [1, 3, SIZE, SIZE] }],
    outputs: [{ name: 'output', datatype: 'FP32', shape: [1, 1, SIZE, SIZE] }],
  };
  const model = `/v2/models/${MODEL_NAME}`;
  app.get('/v2/health/live', async () => ({ live: true }));
  app.get('/v2/health/ready', async () => ({ ready: true }));
  app.get('/v2', async () => ({ name: 'matte-inference', version: '1', extensions: ['binary_tensor_data'] }));
  app.get(model, async () => metadata);
  app.get(`${model}/ready`, async () => ({ name: MODEL_NAME, ready: true }));
  app.post<{ Body: Buffer }>(`${model}/infer`, async (request, reply) => {
    const length = request.headers['inference-header-content-length'];
    let parsed: { header: Tensors | undefined; binary: Buffer };
    try {
      const read = readInferBody(length === undefined ? null : Number(length), request.body);
      parsed = { header: tensorsOf(read.header), binary: read.binary };
    } catch {
      return bad(reply, 'the inference header is not JSON');
    }
    if (!parsed.header) return bad(reply, 'the inference header is not an infer request');
    const inputs = parsed.header.inputs ?? [];
    const input = inputs.find((t) => t.name === 'input');
    if (!input) return bad(reply, 'no input named "input"');
    if (input.datatype !== 'FP32' || input.shape?.join() !== `1,3,${SIZE},${SIZE}`)
      return bad(reply, `input must be FP32 [1,3,${SIZE},${SIZE}]`);
    let values: Float32Array;
    if (input.parameters?.binary_data_size !== undefined) {
      let offset = 0;
      for (const t of inputs) {
        if (t === input) break;
        offset += t.parameters?.binary_data_size ?? 0;
      }
      const size = input.parameters.binary_data_size;
      if (size !== INPUT_VALUES * 4 || parsed.binary.length < offset + size)
        return bad(reply, `input holds ${size} bytes; ${INPUT_VALUES * 4} expected`);
      const slice = parsed.binary.subarray(offset, offset + size);
      values = new Float32Array(slice.buffer.slice(slice.byteOffset, slice.byteOffset + size));
    } else {
      if (!Array.isArray(input.data) || input.data.length !== INPUT_VALUES)
        return bad(reply, `input holds ${input.data?.length ?? 0} values; ${INPUT_VALUES} expected`);
      values = Float32Array.from(input.data);
    }
    const out = await session.run({ input: new ort.Tensor('float32', values, [1, 3, SIZE, SIZE]) }, ['output']);
    const output = out.output.data;
    if (!(output instanceof Float32Array)) throw new Error('the model answered other than float32');
    const wantsBinary = length !== undefined || (parsed.header.outputs ?? []).some((o) => o.parameters?.binary_data);
    if (!wantsBinary)
      return {
        model_name: MODEL_NAME,
        outputs: [{ name: 'output', datatype: 'FP32', shape: [1, 1, SIZE, SIZE], data: Array.from(output) }],
      };
    const bytes = Buffer.from(output.buffer, output.byteOffset, output.byteLength);
    const header = Buffer.from(
      JSON.stringify({
        model_name: MODEL_NAME,
        outputs: [
          {
            name: 'output',
            datatype: 'FP32',
            shape: [1, 1, SIZE, SIZE],
            parameters: { binary_data_size: bytes.length },
          },
        ],
      }),
    );
    return reply
      .header('content-type', 'application/octet-stream')
      .header('inference-header-content-length', String(header.length))
      .send(Buffer.concat([header, bytes]));
  });
  await app.listen({ port, host });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the inference server listens on no port');
  return { app, session, port: address.port };
}
