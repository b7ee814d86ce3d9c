// A child process that makes the cached model createSession loads (model-session.mjs, buildInChild): the
// worker's first start on a machine. What making it takes (the float32 copy, the quantizer's buffers, the
// optimiser's session: about 500 MiB) goes back to the system when this process exits; made in the worker,
// glibc's malloc kept it for the worker's life. The model's bytes on standard input; createSession's options
// (JSON) as the argument. Exits 0 once the file is there.
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import { makeCachedModel } from './model-session.mjs';

const made = await makeCachedModel(ort, fs.readFileSync(0), JSON.parse(process.argv[2]));
process.exit(made ? 0 : 1);
