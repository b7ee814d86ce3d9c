// bin/matte's operator verbs: they open the server's database and work beside a running server (SQLite WAL
// or PostgreSQL). Every verb takes --json; bad input throws VALIDATION (exit 2 in matte.ts).
import type { parseArgs } from 'node:util';
import { parseOptions } from './parse-options.ts';
import fs from 'node:fs';
import { loadConfig } from '../config.ts';
import { openAccountServices } from '../account-services.ts';
import { keyView } from '../services/account.service.ts';
import { purchaseView } from '../services/purchase.service.ts';
import { AppError } from '../errors.ts';
import { formatMicros } from '../domain/instant.ts';
import { LICENSE_STATUSES, PURCHASE_STATUSES } from '../domain/account-states.ts';

const OPTIONS = {
  email: { type: 'string' },
  plan: { type: 'string' },
  pack: { type: 'string' },
  account: { type: 'string' },
  name: { type: 'string' },
  pool: { type: 'string' },
  amount: { type: 'string' },
  reason: { type: 'string' },
  tier: { type: 'string' },
  allowance: { type: 'string' },
  'job-limit': { type: 'string' },
  count: { type: 'string' },
  status: { type: 'string' },
  license: { type: 'string' },
  key: { type: 'string' },
  purchase: { type: 'string' },
  limit: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; strict: true; args: string[] }>>['values'];

function wholeNumber(value: string | undefined, name: string, opts: { signed?: boolean } = {}): number {
  const pattern = opts.signed ? /^[+-]?\d{1,9}$/ : /^\d{1,9}$/;
  if (value === undefined || !pattern.test(value))
    throw new AppError(
      'VALIDATION',
      `--${name} must be a whole number${opts.signed ? ' (a sign allowed)' : ''}, got ${value === undefined ? 'nothing' : `"${value}"`}`,
    );
  return Number(value);
}

function required(values: Values, name: keyof Values): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new AppError('VALIDATION', `--${name} is required`);
  return value;
}

function oneOf<T extends string>(value: string | undefined, name: string, allowed: readonly T[]): T {
  const found = allowed.find((known) => known === value);
  if (found === undefined) throw new AppError('VALIDATION', `--${name} must be one of ${allowed.join(', ')}`);
  return found;
}

function readPassword(values: Values): string | undefined {
  if (!values['password-stdin']) return undefined;
  const text = fs.readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  if (!text) throw new AppError('VALIDATION', '--password-stdin read an empty password');
  return text;
}

/** Runs `matte NOUN VERB [options]` for an operator noun; the exit code is returned. */
export async function runOperatorCommand(noun: string, verb: string, rest: string[]): Promise<number> {
  // `--amount -10` reads as an option to parseArgs; a negative number after --amount is its value.
  const args = rest.flatMap((arg, i) =>
    arg === '--amount' && /^-\d+$/.test(rest[i + 1] ?? '')
      ? []
      : i > 0 && rest[i - 1] === '--amount' && /^-\d+$/.test(arg)
        ? [`--amount=${arg}`]
        : [arg],
  );
  const { values } = parseOptions(args, OPTIONS);
  const config = loadConfig();
  const { store, clock, credits, accounts, licenses, purchases } = await openAccountServices(config);
  const print = (obj: unknown, text: string) =>
    process.stdout.write(values.json ? `${JSON.stringify(obj)}\n` : `${text}\n`);
  const accountSummary = async (id: string) => {
    const account = await store.transaction(async (r) => {
      await credits.renew(r, id, clock());
      return accounts.requireAccount(r, id);
    });
    const license = account.license_id ? await store.repos.licenses.findById(account.license_id) : undefined;
    return {
      accountId: account.id,
      email: account.email,
      plan: account.plan_credits,
      pack: account.pack_credits,
      hasPassword: account.password_hash !== null,
      license: license
        ? {
            id: license.id,
            tier: license.tier,
            status: license.status,
            allowance: license.allowance,
            jobLimit: license.job_limit,
          }
        : null,
      createdAt: new Date(account.created_at).toISOString(),
    };
  };

  try {
    const command = `${noun} ${verb}`;
    switch (command) {
      case 'accounts create': {
        const out = await accounts.createAccount({
          email: required(values, 'email'),
          plan: wholeNumber(values.plan ?? '0', 'plan'),
          pack: wholeNumber(values.pack ?? '0', 'pack'),
          password: readPassword(values),
        });
        print(out, `account ${out.accountId}\napi key ${out.apiKey}  (shown once; store it now)`);
        return 0;
      }
      case 'accounts list': {
        const rows = await store.repos.accounts.list({ limit: wholeNumber(values.limit ?? '100', 'limit') });
        const list = rows.map((a) => ({
          accountId: a.id,
          email: a.email,
          plan: a.plan_credits,
          pack: a.pack_credits,
          createdAt: new Date(a.created_at).toISOString(),
        }));
        print(
          { accounts: list },
          list.map((a) => `${a.accountId}  ${a.email}  plan ${a.plan}  pack ${a.pack}`).join('\n') || '(no accounts)',
        );
        return 0;
      }
      case 'accounts show': {
        const id = required(values, 'account');
        const summary = await accountSummary(id);
        const keys = (await store.repos.accounts.listKeys(id)).map(keyView);
        const ledger = (await store.repos.ledger.list(id, { limit: 10 })).map((r) => ({
          kind: r.kind,
          pool: r.pool,
          amount: r.amount,
          balanceAfter: r.balance_after,
          reason: r.reason,
          createdAt: formatMicros(r.at_us),
        }));
        print(
          { ...summary, keys, recentLedger: ledger },
          [
            `${summary.accountId}  ${summary.email}`,
            `credits: plan ${summary.plan}, pack ${summary.pack}`,
            `licence: ${summary.license ? `${summary.license.id} tier ${summary.license.tier} (${summary.license.status}, ${summary.license.allowance}/month)` : 'none'}`,
            `keys: ${keys.map((k) => `${k.prefix}… ${k.name} (${k.state})`).join(', ') || 'none'}`,
            ...ledger.map(
              (l) =>
                `  ${l.createdAt}  ${l.kind} ${l.pool} ${l.amount >= 0 ? '+' : ''}${l.amount} → ${l.balanceAfter}  ${l.reason ?? ''}`,
            ),
          ].join('\n'),
        );
        return 0;
      }
      case 'accounts password': {
        const id = required(values, 'account');
        const password = readPassword(values);
        if (!password)
          throw new AppError('VALIDATION', 'pass the new password on standard input with --password-stdin');
        await accounts.setPassword(id, password);
        print({ accountId: id, passwordSet: true }, `password set for ${id}; its studio sessions were signed out`);
        return 0;
      }
      case 'credits grant':
      case 'credits adjust': {
        const id = required(values, 'account');
        const pool = oneOf(values.pool, 'pool', ['plan', 'pack'] as const);
        const adjust = verb === 'adjust';
        const amount = wholeNumber(values.amount, 'amount', { signed: adjust });
        if (!adjust && amount === 0) throw new AppError('VALIDATION', '--amount must be more than 0');
        const reason = adjust ? required(values, 'reason') : (values.reason ?? 'granted by the operator');
        await store.transaction((r) =>
          credits.grant(r, id, pool, amount, adjust ? 'adjust' : 'grant', reason, clock()),
        );
        const summary = await accountSummary(id);
        print(summary, `${id}: plan ${summary.plan}, pack ${summary.pack}`);
        return 0;
      }
      case 'licenses create': {
        const created = await licenses.create({
          tier: wholeNumber(required(values, 'tier'), 'tier'),
          allowance: wholeNumber(required(values, 'allowance'), 'allowance'),
          jobLimit: wholeNumber(required(values, 'job-limit'), 'job-limit'),
          count: wholeNumber(values.count ?? '1', 'count'),
        });
        print(
          { licenses: created },
          created
            .map(
              (l) =>
                `${l.code}  (${l.license.id}, tier ${l.license.tier}, ${l.license.allowance}/month, ${l.license.jobLimit} photos/batch; the code is shown once)`,
            )
            .join('\n'),
        );
        return 0;
      }
      case 'licenses list': {
        const status = values.status === undefined ? undefined : oneOf(values.status, 'status', LICENSE_STATUSES);
        const list = await licenses.list(status);
        print(
          { licenses: list },
          list
            .map(
              (l) =>
                `${l.id}  ${l.codePrefix}…  tier ${l.tier}  ${l.allowance}/month  ${l.status}${l.accountId ? `  ${l.accountId}` : ''}`,
            )
            .join('\n') || '(no licences)',
        );
        return 0;
      }
      case 'licenses set': {
        const view = await licenses.setStatus(
          required(values, 'license'),
          oneOf(values.status, 'status', ['active', 'deactivated', 'refunded'] as const),
        );
        print(view, `${view.id} is ${view.status}`);
        return 0;
      }
      case 'keys create': {
        const out = await accounts.createKey(required(values, 'account'), values.name ?? 'cli');
        print({ keyId: out.key.id, ...out }, `key ${out.key.id}\napi key ${out.apiKey}  (shown once; store it now)`);
        return 0;
      }
      case 'keys list': {
        const id = required(values, 'account');
        await store.transaction((r) => accounts.requireAccount(r, id));
        const keys = await accounts.listKeys(id);
        print({ keys }, keys.map((k) => `${k.id}  ${k.prefix}…  ${k.name}  ${k.state}`).join('\n') || '(no keys)');
        return 0;
      }
      case 'keys revoke': {
        const key = await accounts.revokeKey(required(values, 'account'), required(values, 'key'));
        print(key, `${key.id} (${key.prefix}…) is ${key.state}`);
        return 0;
      }
      case 'purchases list': {
        const status = values.status === undefined ? undefined : oneOf(values.status, 'status', PURCHASE_STATUSES);
        const list = await purchases.list({ status, accountId: values.account });
        print(
          { purchases: list },
          list
            .map((p) => `${p.id}  ${p.accountId}  ${p.packId} (${p.credits} credits)  ${p.status}  ${p.createdAt}`)
            .join('\n') || '(no purchases)',
        );
        return 0;
      }
      case 'purchases approve':
      case 'purchases cancel': {
        const id = required(values, 'purchase');
        const row = verb === 'approve' ? await purchases.complete(id) : await purchases.cancel(id);
        const view = purchaseView(row);
        print(
          view,
          `${view.id}: ${view.status}${verb === 'approve' ? `; ${view.credits} credits added to the pack pool of ${view.accountId}` : ''}`,
        );
        return 0;
      }
      default:
        throw new AppError('VALIDATION', `unknown command "${command}" (matte ${noun} --help lists its verbs)`);
    }
  } finally {
    await store.close();
  }
}
