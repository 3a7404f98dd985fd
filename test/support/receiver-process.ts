import type { ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../db/free-port.ts';
import { spawnRecon } from './recon-process.ts';

export interface ReceiverProcess {
  readonly url: string;
  readonly port: number;
  readonly child: ChildProcess;
  output(): string;
  alive(): boolean;
  stop(): Promise<void>;
}

export interface ReceiverProcessOptions {
  /** Polled until it answers 200 (default /health). */
  readonly readyPath?: string;
  /** Default: a new temporary directory (no .env). */
  readonly cwd?: string;
  /** Variables on top of DATABASE_URL, PORT and the secret. */
  readonly env?: Record<string, string | undefined>;
  readonly echoStderr?: boolean;
}

/** Starts `recon notifications serve` as an OS process against `databaseUrl`; waits until it is ready. */
export async function startReceiverProcess(
  databaseUrl: string,
  secret: string,
  options: ReceiverProcessOptions = {},
): Promise<ReceiverProcess> {
  const port = await freePort();
  const p = spawnRecon(
    databaseUrl,
    ['notifications', 'serve'],
    { PORT: String(port), RECON_NOTIFICATION_SECRET: secret, ...options.env },
    {
      cwd: options.cwd ?? mkdtempSync(join(tmpdir(), 'recon-receiver-')),
      echoStderr: options.echoStderr,
    },
  );
  const { child, alive } = p;
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${url}${options.readyPath ?? '/health'}`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (up) break;
    if (!alive()) throw new Error(`receiver exited on start:\n${p.output()}`);
    if (i >= 400) {
      child.kill('SIGKILL');
      throw new Error(`receiver did not become ready in 20 s:\n${p.output()}`);
    }
    await sleep(50);
  }
  return {
    url,
    port,
    child,
    output: p.output,
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
