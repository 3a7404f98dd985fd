import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../db/free-port.ts';

const BIN = fileURLToPath(new URL('../../bin/recon.ts', import.meta.url));

export interface ReceiverProcess {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
  alive(): boolean;
  stop(): Promise<void>;
}

/** Starts `recon notifications serve` as an OS process against `databaseUrl`; waits until it listens. */
export async function startReceiverProcess(databaseUrl: string, secret: string): Promise<ReceiverProcess> {
  const port = await freePort();
  let output = '';
  const child = spawn(process.execPath, [BIN, 'notifications', 'serve'], {
    cwd: mkdtempSync(join(tmpdir(), 'recon-receiver-')),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      RECON_NOTIFICATION_SECRET: secret,
    },
  });
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 400; i++) {
    const up = await fetch(`${url}/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) break;
    if (!alive()) throw new Error(`receiver exited on start:\n${output}`);
    await sleep(50);
  }
  return {
    url,
    child,
    output: () => output,
    alive,
    stop: async () => {
      if (!alive()) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, sleep(10_000)]);
      if (alive()) child.kill('SIGKILL');
    },
  };
}

export function notificationBody(transactionId: string): Record<string, unknown> {
  return {
    merchant: {
      merchantId: 'IBTMERCH0001',
      merchantTransactionId: `M-${transactionId}`.slice(0, 30),
      merchantUserId: 'user-1',
    },
    accountInfo: {
      accountToken: 'acct-1',
      accountLabel: '****1234',
      accountType: 'PC',
      fiName: 'Maple Bank',
    },
    transaction: {
      transactionId,
      transactionType: 'DEBIT',
      transactionStatus: 'SUCCESS',
      transactionAmount: 2015,
      transactionFee: 30,
      currencyCode: 'CAD',
    },
  };
}

export interface DeliveryOutcome {
  /** Every status the provider saw, in order; 0 for a connection error. */
  readonly statuses: number[];
  readonly final: number;
}

/**
 * Delivers one body the way the provider does: retries on a 5xx or a connection error (after
 * Retry-After when given, capped at `maxWaitMs`), until a non-5xx answer or `deadline`.
 */
export async function deliverWithRetries(
  url: string,
  secret: string,
  body: string,
  options: { deadline?: number; maxWaitMs?: number; path?: string } = {},
): Promise<DeliveryOutcome> {
  const deadline = options.deadline ?? Date.now() + 60_000;
  const statuses: number[] = [];
  for (;;) {
    let status: number;
    let wait = 50;
    try {
      const res = await fetch(`${url}${options.path ?? '/notifications/transaction'}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(15_000),
      });
      status = res.status;
      await res.arrayBuffer();
      const after = Number(res.headers.get('retry-after'));
      if (after > 0) wait = after * 1000;
    } catch {
      status = 0;
    }
    statuses.push(status);
    if (status !== 0 && status < 500) return { statuses, final: status };
    if (Date.now() > deadline) return { statuses, final: status };
    await sleep(Math.min(wait, options.maxWaitMs ?? 200));
  }
}
