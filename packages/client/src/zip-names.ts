// File names inside a download: the `pattern` with its tokens filled in, made safe on every OS
// (Windows, macOS, Linux) and unique. Pure functions, unit-tested; the server names a ZIP's entries with
// them and the studio previews the first names with the same code.
//   {name}   the photo's file name without folder and extension
//   {index}  its position in the download, counting from `start` (default 1)
//   {n}      its position, 1-based, zero-padded to the width of the count (001 … 120)
//   {preset} the preset the file was rendered for
//   {w} {h}  the file's width and height in pixels
//   {date}   the batch's creation date, YYYY-MM-DD (UTC)
//   {sku}    the SKU given for the photo in `skus`

export const PATTERN_TOKENS = ['name', 'index', 'n', 'preset', 'w', 'h', 'date', 'sku'] as const;
export type PatternToken = (typeof PATTERN_TOKENS)[number];
export type TokenValues = Record<PatternToken, string>;

const MAX_NAME = 150;
// Reserved device names on Windows, with or without an extension.
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/i;

/** A pattern the server would refuse (400 VALIDATION at `querystring/pattern`), with the reason. */
export class PatternError extends Error {
  override readonly name = 'PatternError';
}

function invalid(message: string): never {
  throw new PatternError(message);
}

/** Checks a pattern and returns the tokens it uses. */
export function parsePattern(pattern: string): Set<PatternToken> {
  const used = new Set<PatternToken>();
  for (const match of pattern.matchAll(/\{([^{}]*)\}/g)) {
    if (!(PATTERN_TOKENS as readonly string[]).includes(match[1]))
      invalid(`Unknown token {${match[1]}} in pattern; tokens: ${PATTERN_TOKENS.map((t) => `{${t}}`).join(' ')}.`);
    used.add(match[1] as PatternToken);
  }
  const literal = pattern.replace(/\{[^{}]*\}/g, '');
  if (/[{}]/.test(literal)) invalid('The pattern has an unmatched brace.');
  // The pattern's own text must already be a safe name: no folders, no characters an OS refuses.
  // eslint-disable-next-line no-control-regex
  if (/[/\\:*?"<>|\u0000-\u001f]/.test(literal))
    invalid('The pattern may not contain / \\ : * ? " < > | or control characters.');
  if (literal.includes('..')) invalid('The pattern may not contain "..".');
  if (used.size === 0 && !literal.trim()) invalid('The pattern is empty.');
  return used;
}

/** A value put into a name: characters no OS accepts become _, and runs of them one _. */
export function safePart(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[/\\:*?"<>|\u0000-\u001f\u007f]+/g, '_');
}

/** The name for one file (without extension), safe on every OS. */
export function fillPattern(pattern: string, values: TokenValues): string {
  let name = pattern.replace(/\{([a-z]+)\}/g, (_, token: PatternToken) => safePart(values[token]));
  name = name
    .replace(/\.{2,}/g, '.')
    .trim()
    .replace(/[. ]+$/, '')
    .slice(0, MAX_NAME)
    .replace(/[. ]+$/, '');
  if (!name) name = `photo-${values.index}`;
  if (RESERVED.test(name)) name = `_${name}`;
  return name;
}

/** The photo's name as uploaded, without folders and extension. */
export function baseName(uploaded: string): string {
  const last = uploaded.split(/[\\/]/).pop() ?? uploaded;
  const dot = last.lastIndexOf('.');
  return dot > 0 ? last.slice(0, dot) : last;
}

/**
 * Keeps names unique within a folder, compared as a case-insensitive file system would. With the
 * caller's own pattern a clash is an error (the seller asked for exact names: add {index} or {sku});
 * with the default pattern a clash gets " (2)", " (3)", … as a desktop does.
 */
export class UniqueNames {
  private readonly seen = new Set<string>();
  constructor(private readonly strict: boolean) {}

  take(folder: string, name: string, ext: string): string {
    let candidate = `${name}.${ext}`;
    for (let k = 2; this.seen.has(`${folder}/${candidate}`.toLowerCase()); k++) {
      if (this.strict) invalid(`The pattern gives two files the same name, "${candidate}"; add {index}, {n} or {sku}.`);
      candidate = `${name} (${k}).${ext}`;
    }
    this.seen.add(`${folder}/${candidate}`.toLowerCase());
    return folder ? `${folder}/${candidate}` : candidate;
  }
}
