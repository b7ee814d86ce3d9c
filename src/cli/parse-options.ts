// Every command's options are read here: node:util's parseArgs, with its mistakes worded for a person. A
// mistyped option names the closest known one ("unknown option --outptu; did you mean --out?"), instead of
// Node's advice about positional arguments; bin/matte prints the line and exits 2.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closest, distance } from 'fastest-levenshtein';
import { errorCode } from '../errors.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * The known word closest to `given` (an option without its dashes, a command), if it is near enough to be the one
 * meant.
 */
export function closestWord(given: string, known: string[]): string | undefined {
  if (known.length === 0) return undefined;
  // A known option the typed one starts with (--outptu → --out), or one within half its letters (--jsno → --json).
  const prefix = known.filter((k) => k.length >= 3 && given.startsWith(k)).sort((a, b) => b.length - a.length)[0];
  if (prefix) return prefix;
  const best = closest(given, known);
  return distance(given, best) <= Math.max(1, Math.floor(Math.max(given.length, best.length) / 2)) ? best : undefined;
}

/** The line for a parseArgs mistake, or undefined when `err` is not one. */
function mistake(err: unknown, options: Options): string | undefined {
  const code = errorCode(err);
  if (!(err instanceof Error) || !code?.startsWith('ERR_PARSE_ARGS')) return undefined;
  const e = { code, message: err.message };
  const quoted = /'(-[^']*)'/.exec(e.message)?.[1];
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && quoted) {
    const name = quoted.replace(/^-+/, '').split('=')[0]!;
    const known = Object.keys(options);
    const near = quoted.startsWith('--') ? closestWord(name, known) : undefined;
    return `unknown option ${quoted.split('=')[0]}${near ? `; did you mean --${near}?` : ` (known: ${known.map((k) => `--${k}`).join(', ')})`}`;
  }
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const name = /Option '(?:-\w, )?(--[\w-]+)/.exec(e.message)?.[1];
    if (name && options[name.slice(2)]?.type === 'string') return `${name} needs a value`;
    if (name) return `${name} takes no value`;
  }
  if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const word = /'([^']*)'/.exec(e.message)?.[1];
    return `unexpected argument "${word ?? ''}" (this command takes options only)`;
  }
  return e.message;
}

/** parseArgs, strict, with its mistakes as one clear line; the error keeps parseArgs' code, which bin/matte exits 2 on. */
export function parseOptions<const O extends Options, const P extends boolean = false>(
  args: string[],
  options: O,
  allowPositionals?: P,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: (allowPositionals ?? false) as P });
  } catch (err) {
    const line = mistake(err, options);
    if (line === undefined) throw err;
    throw Object.assign(new Error(line), { code: errorCode(err) });
  }
}
