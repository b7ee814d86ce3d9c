// bin/matte's commands, one line each, and the help built from them: `matte --help` lists every command,
// `matte NOUN --help` a noun's verbs, `matte NOUN VERB --help` one verb with what it does. Help goes to
// standard output with exit 0; a usage mistake is one line on standard error with exit 2 (the callers).
import { ALL_PRESETS } from '../presets/presets.ts';

interface CommandHelp {
  /** `accounts create`, or a noun alone (`serve`, `remove`). */
  name: string;
  /** Its arguments and options, as typed. */
  args: string;
  /** What it does, in one line. */
  does: string;
  /** More, shown with the command's own help only (`matte remove --help`): its choices, tokens, variables. */
  more?: () => string[];
}

export interface HelpSection {
  title: string;
  commands: CommandHelp[];
}

const CLIENT_HELP: HelpSection = {
  title: 'client commands (talk to a Matte server with an API key)',
  commands: [
    {
      name: 'login',
      args: '[--url URL] --api-key-stdin',
      does: 'stores the server and the key read from standard input (on a terminal it asks, without echo); or set MATTE_URL and MATTE_API_KEY',
    },
    {
      name: 'remove',
      args: 'PATH… -o OUT [--preset ID] [--background white|transparent|#RRGGBB] [--format png|jpeg|webp] [--sample N] [--heavy] [--pattern P]',
      does: 'cuts out files, folders and ZIPs into OUT (a file it cannot send is named and left out: exit 1); run it again to resume',
      more: () => [
        `--preset ID: how each result is rendered, one of: ${ALL_PRESETS.map((p) => p.id).join(', ')} (default original; GET /v1/presets describes them)`,
        "--pattern P: the file name of each result under OUT, from the tokens {name} (the photo's file name, without its extension) and {preset} (default {name}); the extension follows the format",
      ],
    },
    {
      name: 'batches list',
      args: '[--status S] [--limit N] [--all]',
      does: 'your batches, newest first, with their names; one-photo calls and empty drafts only with --all',
    },
    { name: 'batches show', args: 'ID', does: 'one batch and its photos' },
    {
      name: 'batches download',
      args: 'ID -o FILE.zip [--format F] [--pattern P]',
      does: 'the ZIP of its finished photos',
    },
    { name: 'account', args: '', does: 'credits, limits, and whether a heavy re-run uses a stronger model' },
  ],
};

/** Every command of bin/matte, in the order `matte --help` lists them. */
export const SECTIONS: HelpSection[] = [
  {
    title: 'processes',
    commands: [
      {
        name: 'serve',
        args: '',
        does: 'the API server, its worker and the studio (as npm start; MATTE_WORKER=0: API only)',
        more: () => [
          'It reads its settings from the environment: PORT (default 8080), HOST (default 0.0.0.0: every address), DATA_DIR (default ./data: the SQLite database and the files), PUBLIC_BASE_URL, DATABASE_URL (postgres://… for PostgreSQL), MATTE_WORKER=0 (API only), LOG_LEVEL and LOG_FORMAT=json; docs/configuration.md lists every variable.',
        ],
      },
      { name: 'worker', args: '', does: 'a worker process: runs photos, webhooks and retention (PostgreSQL)' },
      {
        name: 'inference-server',
        args: '[--port N] [--host H]',
        does: 'the model over the Open Inference Protocol, as model "isnet"',
      },
    ],
  },
  {
    title: "operator commands (on the server's machine, beside its database; they work while it runs)",
    commands: [
      {
        name: 'accounts create',
        args: '--email E [--plan N] [--pack N] [--password-stdin]',
        does: 'a new account and its first API key (shown once); the password for the studio on standard input',
      },
      { name: 'accounts list', args: '[--limit N]', does: 'accounts, newest first' },
      { name: 'accounts show', args: '--account ID', does: 'one account: credits, licence, keys, recent ledger' },
      {
        name: 'accounts password',
        args: '--account ID --password-stdin',
        does: "sets the studio password (read from standard input); the account's sessions are signed out",
      },
      {
        name: 'credits grant',
        args: '--account ID --pool plan|pack --amount N [--reason TEXT]',
        does: 'adds credits to a pool',
      },
      {
        name: 'credits adjust',
        args: '--account ID --pool plan|pack --amount ±N --reason TEXT',
        does: 'corrects a pool up or down, with the reason in the ledger',
      },
      {
        name: 'licenses create',
        args: '--tier N --allowance N --job-limit N [--count N]',
        does: 'licence codes to sell (each shown once)',
      },
      { name: 'licenses list', args: '[--status purchased|active|deactivated|refunded]', does: 'licences' },
      {
        name: 'licenses set',
        args: '--license ID --status active|deactivated|refunded',
        does: "changes a licence's status",
      },
      { name: 'keys create', args: '--account ID [--name NAME]', does: 'a new API key (shown once)' },
      { name: 'keys list', args: '--account ID', does: "an account's keys" },
      { name: 'keys revoke', args: '--account ID --key KEY_ID', does: 'revokes a key at once' },
      {
        name: 'purchases list',
        args: '[--status pending|completed|cancelled] [--account ID]',
        does: 'credit purchases made in the studio',
      },
      {
        name: 'purchases approve',
        args: '--purchase ID',
        does: 'approves a purchase: its credits go to the pack pool',
      },
      { name: 'purchases cancel', args: '--purchase ID', does: 'cancels a pending purchase' },
    ],
  },
  CLIENT_HELP,
];

/** The nouns that speak HTTP with an API key (client/commands.ts). */
export const CLIENT_NOUNS = new Set(CLIENT_HELP.commands.map((c) => c.name.split(' ')[0]!));

const HELP_FLAGS = new Set(['--help', '-h']);

/** Whether the arguments ask for help (before a `--`, which ends the options). */
export function wantsHelp(argv: string[]): boolean {
  for (const arg of argv) {
    if (arg === '--') return false;
    if (HELP_FLAGS.has(arg)) return true;
  }
  return false;
}

const line = (c: CommandHelp, width: number) =>
  `  ${`matte ${c.name}`.padEnd(width)}  ${c.args}${c.args ? '\n' + ' '.repeat(width + 4) : ''}${c.does}`;

/**
 * The help for what `words` names (nothing: every command; a noun: its verbs; a noun and a verb: that
 * verb), or null when nothing matches them.
 */
export function helpFor(sections: HelpSection[], words: string[]): string | null {
  const all = sections.flatMap((s) => s.commands);
  const width = Math.max(...all.map((c) => c.name.length + 6));
  const [noun, verb] = words;
  if (!noun)
    return [
      'usage: matte <command> [verb] [options] [--json]   (matte <command> --help for one command)',
      ...sections.flatMap((s) => ['', `${s.title}:`, ...s.commands.map((c) => line(c, width))]),
    ].join('\n');
  const exact = verb ? all.filter((c) => c.name === `${noun} ${verb}`) : [];
  const matched = exact.length ? exact : all.filter((c) => c.name === noun || c.name.startsWith(`${noun} `));
  if (!matched.length) return null;
  const more = matched.length === 1 ? (matched[0].more?.() ?? []) : [];
  return [
    `usage:`,
    ...matched.map((c) => line(c, width)),
    ...(more.length ? ['', ...more] : []),
    '',
    'Every command takes --json (machine-readable output).',
  ].join('\n');
}
