// deploy/: the Compose file describes PostgreSQL, an S3 store, two API processes, two workers and an
// optional Triton, wired with the settings the service reads; `docker compose config` checks it where the
// machine has Compose (it has no Docker engine here, so nothing runs). The Triton model repository serves
// the model under the name the service expects, with its input and output.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.ts';

const DEPLOY = path.resolve(import.meta.dirname, '../../deploy');

function composeAvailable(): boolean {
  try {
    execFileSync('docker', ['compose', 'version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const COMPOSE = composeAvailable();
if (!COMPOSE) console.warn('[matte tests] docker compose is not installed here: `docker compose config` is SKIPPED');

describe('deploy/compose.yaml', () => {
  const file = path.join(DEPLOY, 'compose.yaml');
  const doc = parse(fs.readFileSync(file, 'utf8'), { merge: true }) as {
    services: Record<string, { environment?: Record<string, string>; command?: string[]; profiles?: string[] }>;
  };

  it('has the database, the store, two API processes, two workers and Triton as a GPU profile', () => {
    const s = doc.services;
    expect(Object.keys(s)).toEqual(
      expect.arrayContaining(['postgres', 's3', 'api-1', 'api-2', 'worker-1', 'worker-2', 'triton']),
    );
    for (const api of ['api-1', 'api-2']) expect(s[api].environment?.MATTE_WORKER).toBe('0');
    for (const worker of ['worker-1', 'worker-2']) expect(s[worker].command).toEqual(['bin/matte', 'worker']);
    expect(s.triton.profiles).toEqual(['gpu']);
  });

  it("passes settings the service accepts (loadConfig reads an API process's environment)", () => {
    const env = Object.fromEntries(
      Object.entries(doc.services['api-1'].environment ?? {}).map(([k, v]) => [
        k,
        String(v).replace(/\$\{[^:}]+:-([^}]*)\}/g, '$1'),
      ]),
    );
    const config = loadConfig(env);
    expect(config.databaseUrl).toMatch(/^postgres:\/\//);
    expect(config.blobStore).toBe('s3://matte/files');
    expect(config.s3).toMatchObject({ endpoint: 'http://s3:7070', forcePathStyle: true });
    expect(config.embeddedWorker).toBe(false);
    expect(config.metricsPort).toBe(9464);
  });

  it.skipIf(!COMPOSE)('is valid for docker compose', () => {
    execFileSync('docker', ['compose', '-f', file, 'config', '-q'], { stdio: 'pipe' });
  });
});

describe('deploy/triton', () => {
  it('serves the model as "isnet" with the service’s input and output', () => {
    const config = fs.readFileSync(path.join(DEPLOY, 'triton/isnet/config.pbtxt'), 'utf8');
    expect(config).toMatch(/^name: "isnet"$/m);
    expect(config).toMatch(/platform: "onnxruntime_onnx"/);
    expect(config).toMatch(/name: "input"\s+data_type: TYPE_FP32\s+dims: \[ 1, 3, 1024, 1024 \]/);
    expect(config).toMatch(/name: "output"\s+data_type: TYPE_FP32\s+dims: \[ 1, 1, 1024, 1024 \]/);
  });
});
