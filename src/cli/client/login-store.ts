// Where `matte login` keeps the server and API key: config.json in the user's config directory
// (env-paths: $XDG_CONFIG_HOME/matte on Linux), readable by the user alone (0600 in a 0700 folder).
// MATTE_URL and MATTE_API_KEY override it.
import fs from 'node:fs';
import path from 'node:path';
import envPaths from 'env-paths';
import { UsageError } from './usage-error.ts';

export interface Login {
  url: string;
  apiKey: string;
}

function loginFile(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.MATTE_CONFIG_DIR || envPaths('matte', { suffix: '' }).config;
  return path.join(dir, 'config.json');
}

export function saveLogin(login: Login, env: NodeJS.ProcessEnv = process.env): string {
  const file = loginFile(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  // Written under another name with mode 0600 from the start, then renamed: never readable by others.
  fs.writeFileSync(temp, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temp, 0o600);
  fs.renameSync(temp, file);
  return file;
}

export function readLogin(env: NodeJS.ProcessEnv = process.env): Login {
  let stored: Partial<Login> = {};
  const file = loginFile(env);
  if (fs.existsSync(file)) {
    try {
      stored = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<Login>;
    } catch {
      throw new UsageError(`${file} is not valid JSON; run matte login again`);
    }
  }
  const url = env.MATTE_URL || stored.url;
  const apiKey = env.MATTE_API_KEY || stored.apiKey;
  if (!url || !apiKey) throw new UsageError('not logged in: run matte login (or set MATTE_URL and MATTE_API_KEY)');
  return { url: normaliseUrl(url), apiKey };
}

export function normaliseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(`"${url}" is not a URL (for example http://localhost:8080)`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new UsageError(`"${url}" must be an http or https URL`);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '').replace(/\/v1$/, '')}`;
}
