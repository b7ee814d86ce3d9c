// bin/matte's commands: the processes (serve, worker, inference-server), the client verbs (client/commands.ts)
// and the operator verbs (operator.ts), each loaded only when asked for, so help and mistakes answer at once.
// Every verb takes --json; help goes to standard output with exit 0.
import { closestWord, parseOptions } from './parse-options.ts';
import { AppError } from '../errors.ts';
import { CLIENT_NOUNS, helpFor, SECTIONS, wantsHelp } from './help.ts';

const NOUNS = new Set(SECTIONS.flatMap((s) => s.commands.map((c) => c.name.split(' ')[0]!)));

/** Where help goes: standard output, or what a test reads. */
interface HelpOutput {
  write(text: string): unknown;
}

/** Runs `matte ARGV` and answers its exit code; bad input throws (AppError VALIDATION, or a parse error). */
export async function main(argv: string[], helpOut: HelpOutput = process.stdout): Promise<number> {
  const [noun, verb, ...rest] = argv;
  // `matte --help`, `matte help`, `matte NOUN --help`, `matte NOUN VERB -h`: help on standard output, exit 0.
  if (noun === 'help' || wantsHelp(argv)) {
    const words = (noun === 'help' ? argv.slice(1) : argv).filter((a) => !a.startsWith('-')).slice(0, 2);
    const help = helpFor(SECTIONS, words);
    if (help === null)
      throw new AppError('VALIDATION', `unknown command "${words.join(' ')}" (matte --help lists them)`);
    helpOut.write(`${help}\n`);
    return 0;
  }
  if (noun && !noun.startsWith('-') && !NOUNS.has(noun)) {
    const near = closestWord(noun, [...NOUNS]);
    throw new AppError(
      'VALIDATION',
      `unknown command "${noun}"${near ? `; did you mean "${near}"?` : ''} (matte --help lists them)`,
    );
  }
  // Long-running processes: the API (with its worker unless MATTE_WORKER=0), and a worker alone.
  if (noun === 'serve' || noun === 'worker') {
    await import(noun === 'serve' ? '../main/api.ts' : '../main/worker.ts');
    return new Promise<number>(() => undefined); // they exit on SIGTERM or SIGINT
  }
  if (noun === 'inference-server') {
    const { values } = parseOptions(argv.slice(1), { port: { type: 'string' }, host: { type: 'string' } });
    const port = Number(values.port ?? '8001');
    if (!/^\d{1,5}$/.test(values.port ?? '8001') || port > 65535)
      throw new AppError('VALIDATION', `--port must be a port number, got "${values.port}"`);
    const { startInferenceServer, MODEL_NAME } = await import('../main/inference-server.ts');
    const server = await startInferenceServer(port, values.host ?? '0.0.0.0');
    process.stderr.write(
      `matte inference-server: model ${MODEL_NAME} at http://${values.host ?? '0.0.0.0'}:${server.port}/v2/models/${MODEL_NAME}\n`,
    );
    const stop = () => void server.app.close().then(() => process.exit(0));
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    return new Promise<number>(() => undefined);
  }
  // Client verbs speak HTTP with an API key; the operator verbs below open the database.
  if (noun && CLIENT_NOUNS.has(noun)) {
    const { runClientCommand } = await import('./client/commands.ts');
    return runClientCommand(argv);
  }
  if (!noun || noun.startsWith('-')) {
    process.stderr.write(`${helpFor(SECTIONS, [])}\n`);
    return 2;
  }
  if (!verb || verb.startsWith('-'))
    throw new AppError('VALIDATION', `"${noun}" needs a verb (matte ${noun} --help lists them)`);
  const { runOperatorCommand } = await import('./operator.ts');
  return runOperatorCommand(noun, verb, rest);
}
