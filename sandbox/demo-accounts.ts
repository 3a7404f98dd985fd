/**
 * The two provider accounts of `recon demo`: `ca-main` settling in CAD and `us-main` in USD, each
 * with its own history seed, merchant ids and credentials on the several-accounts sandbox, its own
 * merchant side (ledger, notifications) and its own ground truth.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Accounts, loadAccounts } from '../config/accounts.ts';
import type { DatabaseHandle } from '../db/connect.ts';
import { type AccountsSandbox, startAccountsSandbox } from './accounts-sandbox.ts';
import { loadMerchantSide } from './load-merchant-side.ts';
import { deriveMerchantView, type MerchantView } from './merchant-view.ts';
import { formatGroundTruthScore, scoreGroundTruth } from './score-ground-truth.ts';

export interface DemoAccount {
  readonly name: string;
  readonly currency: string;
  readonly view: MerchantView;
}

export interface DemoAccounts {
  readonly list: readonly DemoAccount[];
  readonly sandbox: AccountsSandbox;
  /** The accounts as the worker reads them (an accounts file in the data directory, secrets by env). */
  readonly accounts: Accounts;
  close(): Promise<void>;
}

/** The CAD account carries the requested volume, the USD account a third of it. */
const SPECS = [
  {
    name: 'ca-main',
    currency: 'CAD',
    seed: 'demo',
    share: 1,
    merchantId: 'IBTMERCH0001',
    legacy: 'EXF00001',
  },
  {
    name: 'us-main',
    currency: 'USD',
    seed: 'demo-usd',
    share: 1 / 3,
    merchantId: 'IBTMERCH0002',
    legacy: 'EXF00002',
  },
] as const;

/** Derives both accounts' views and serves them on the sandbox; writes the accounts file. */
export async function startDemoAccounts(options: {
  from: string;
  to: string;
  transactions: number;
  dataDir: string;
}): Promise<DemoAccounts> {
  const list = SPECS.map((s) => ({
    name: s.name,
    currency: s.currency,
    view: deriveMerchantView({
      seed: s.seed,
      transactions: Math.max(1, Math.round(options.transactions * s.share)),
      from: options.from,
      to: options.to,
      account: { merchantId: s.merchantId, legacyMerchantId: s.legacy, currency: s.currency },
    }),
  }));
  const sandbox = await startAccountsSandbox({
    accounts: list.map((a) => ({ name: a.name, seed: a.view.history.options.seed, history: a.view.history })),
  });
  try {
    const file = sandbox.accountsFile();
    const dir = join(options.dataDir, 'demo');
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'accounts.json');
    // The file holds references only; the secrets stay in this process's memory.
    const parsed = JSON.parse(file.json) as { accounts: Record<string, unknown>[] };
    parsed.accounts.forEach((a, i) => (a.currency = list[i]!.currency));
    writeFileSync(path, `${JSON.stringify(parsed, null, 2)}\n`);
    const accounts = loadAccounts({ ...file.env, RECON_ACCOUNTS_FILE: path, RECON_ENVIRONMENT: 'staging' });
    return { list, sandbox, accounts, close: () => sandbox.close() };
  } catch (error) {
    await sandbox.close();
    throw error;
  }
}

/** Loads each account's merchant side (the fee schedule once: it is the merchant's, not an account's). */
export async function loadDemoMerchantSides(handle: DatabaseHandle, demo: DemoAccounts) {
  const loaded = [];
  for (const [i, a] of demo.list.entries()) {
    loaded.push({
      name: a.name,
      ...(await loadMerchantSide(handle, a.view, 'staging', { feeSchedule: i === 0, account: a.name })),
    });
  }
  return loaded;
}

/** One line per account: its ground-truth score over from..to, against its own findings. */
export async function demoScores(
  handle: DatabaseHandle,
  demo: DemoAccounts,
  range: { from: string; to: string },
): Promise<string[]> {
  const lines: string[] = [];
  for (const a of demo.list) {
    const score = await scoreGroundTruth(handle.db, a.view.expected, range, a.name);
    lines.push(`${a.name} (${a.currency}): ${formatGroundTruthScore(score)}`);
  }
  return lines;
}
