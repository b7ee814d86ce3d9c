// bin/matte: admin verbs that work beside a running server (SQLite WAL or PostgreSQL).
//   matte accounts create --email E --plan N --pack N [--json]
//   matte keys create --account ID [--name NAME] [--json]
//   matte credits grant --account ID --pool plan|pack --amount N [--json]
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { createDatabase } from '../db/database.ts';
import { Store } from '../db/store.ts';
import { CreditsService } from '../services/credits.service.ts';
import { AccountService } from '../services/account.service.ts';
import { AppError } from '../errors.ts';

const USAGE = `usage:
  matte accounts create --email E --plan N --pack N [--json]
  matte keys create --account ID [--name NAME] [--json]
  matte credits grant --account ID --pool plan|pack --amount N [--json]`;

function wholeNumber(value: string | undefined, name: string): number {
  if (value === undefined || !/^-?\d+$/.test(value)) throw new AppError('VALIDATION', `--${name} must be a whole number`);
  return Number(value);
}

async function main(argv: string[]): Promise<number> {
  const [noun, verb, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { email: { type: 'string' }, plan: { type: 'string' }, pack: { type: 'string' }, account: { type: 'string' }, name: { type: 'string' }, pool: { type: 'string' }, amount: { type: 'string' }, json: { type: 'boolean' } },
    strict: true,
  });
  const config = loadConfig();
  const store = new Store(await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }));
  const credits = new CreditsService();
  const accounts = new AccountService({ store, credits, clock: Date.now, limits: { photosPerBatch: 200, activeBatches: 2, requestsPerMinute: 60, photosPerHour: 2000, resultsKeptForHours: 2 } });
  const print = (obj: Record<string, unknown>, text: string) => process.stdout.write(values.json ? `${JSON.stringify(obj)}\n` : `${text}\n`);
  try {
    if (noun === 'accounts' && verb === 'create') {
      if (!values.email) throw new AppError('VALIDATION', '--email is required');
      const out = await accounts.createAccount({ email: values.email, plan: wholeNumber(values.plan ?? '0', 'plan'), pack: wholeNumber(values.pack ?? '0', 'pack') });
      print(out, `account ${out.accountId}\napi key ${out.apiKey}  (shown once; store it now)`);
      return 0;
    }
    if (noun === 'keys' && verb === 'create') {
      if (!values.account) throw new AppError('VALIDATION', '--account is required');
      const out = await accounts.createKey(values.account, values.name ?? 'cli');
      print(out, `key ${out.keyId}\napi key ${out.apiKey}  (shown once; store it now)`);
      return 0;
    }
    if (noun === 'credits' && verb === 'grant') {
      if (!values.account) throw new AppError('VALIDATION', '--account is required');
      const pool = values.pool;
      if (pool !== 'plan' && pool !== 'pack') throw new AppError('VALIDATION', '--pool must be plan or pack');
      const amount = wholeNumber(values.amount, 'amount');
      await store.transaction((r) => credits.grant(r, values.account!, pool, amount, 'adjust', 'granted with bin/matte', Date.now()));
      const account = await store.repos.accounts.findById(values.account);
      print({ accountId: values.account, plan: account!.plan_credits, pack: account!.pack_credits }, `plan ${account!.plan_credits}, pack ${account!.pack_credits}`);
      return 0;
    }
    process.stderr.write(`${USAGE}\n`);
    return 2;
  } finally {
    await store.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`matte: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(err instanceof AppError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') ? 2 : 1);
  },
);
