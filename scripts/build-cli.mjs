// Builds bin/matte's JavaScript (src/cli/matte.ts and what it loads → dist/cli/) with esbuild: one file for the
// command and a chunk for each part it loads when asked for (the API, the worker, the client and operator verbs).
// Node then starts it without a TypeScript loader: a process starts with about a third of the CPU it took
// through tsx (`npm run bench -- startup`; docs/performance.md, "Kept, with their reasons"). Dependencies stay in node_modules; the worker
// threads' .mjs files run from src/ as they are. It runs in `npm install` (prepare), and bin/matte runs it again
// whenever a file under src/ or packages/client/src/ is newer than the build, so the command never runs stale code.
//
// Several bin/matte may build at once (a test suite starting servers): each builds into a folder of its own and
// moves its files in, the chunks first and the entry last. Chunks are named by their content, so a process
// already running finds the chunks it loads later, and two builds of the same sources write the same files.
import * as esbuild from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const entry = path.join(root, 'src/cli/matte.ts');
/** Where the build goes: dist/cli, or MATTE_CLI_DIST (a test's own folder). */
const outdir = path.resolve(process.env.MATTE_CLI_DIST || path.join(root, 'dist/cli'));
/** The entry's name in outdir, which bin/matte runs and compares with the sources. */
const ENTRY = 'matte.js';

if (!fs.existsSync(entry)) {
  // An install before the sources are copied in (the Docker image's dependency layer): bin/matte builds later.
  console.log('cli: not built (no src/ yet)');
  process.exit(0);
}

const deps = (/** @type {string} */ file) =>
  Object.keys(JSON.parse(fs.readFileSync(path.join(root, file), 'utf8')).dependencies ?? {});
// The workspace's client package is TypeScript, and is built in; every dependency, its own too, is loaded from
// node_modules, so an npm install that updates one needs no new build.
const external = [...deps('package.json'), ...deps('packages/client/package.json')].filter(
  (name) => name !== '@matte/client',
);

/** `import.meta.url` in a source file means that file's address, wherever the bundle puts its code. @type {import('esbuild').Plugin} */
const sourceUrls = {
  name: 'source-urls',
  setup(build) {
    build.onLoad({ filter: /\.(ts|mjs)$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      const contents = text.includes('import.meta.url')
        ? text.replaceAll(
            'import.meta.url',
            `new URL(${JSON.stringify(path.relative(outdir, args.path).split(path.sep).join('/'))}, import.meta.url).href`,
          )
        : text;
      return { contents, loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

// Sources changed after this moment are newer than the build, and bin/matte builds again.
const started = new Date();
fs.mkdirSync(path.dirname(outdir), { recursive: true });
const staging = fs.mkdtempSync(`${outdir}.building-`);
try {
  await esbuild.build({
    entryPoints: { matte: entry },
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external,
    plugins: [sourceUrls],
    // Stack traces in logs name the source files (bin/matte runs node with --enable-source-maps).
    sourcemap: 'linked',
    sourceRoot: '',
    logLevel: 'warning',
  });
  fs.mkdirSync(outdir, { recursive: true });
  const files = fs.readdirSync(staging);
  const last = (/** @type {string} */ f) => f === ENTRY || f === `${ENTRY}.map`;
  for (const f of [...files.filter((f) => !last(f)), `${ENTRY}.map`, ENTRY])
    fs.renameSync(path.join(staging, f), path.join(outdir, f));
  fs.utimesSync(path.join(outdir, ENTRY), started, started);
  // Chunks of earlier builds that no process has started from for an hour.
  const kept = new Set(files);
  for (const f of fs.readdirSync(outdir)) {
    const file = path.join(outdir, f);
    if (!kept.has(f) && Date.now() - fs.statSync(file).mtimeMs > 3_600_000) fs.rmSync(file, { force: true });
  }
} finally {
  fs.rmSync(staging, { recursive: true, force: true });
}
console.log(`cli: built into ${path.relative(root, outdir) || outdir}`);
