import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { queryRows } from './context.ts';
import { startFaultPostgres } from '../test/support/fault-postgres.ts';
import { startReceiverProcess, type ReceiverProcess } from '../test/support/receiver-process.ts';
import type { BenchContext, BenchResult, BenchStep } from './steps.ts';

/**
 * The notification receiver as the provider meets it: `recon notifications serve` as its own process,
 * BENCH_RECEIVER_DELIVERIES distinct deliveries (default 2,000) sent by 50 concurrent senders over
 * keep-alive connections, each retried on a 5xx or a connection error as the provider does (after
 * Retry-After, capped at 250 ms here). Two runs: a steady one, and one whose PostgreSQL is restarted
 * (`pg_ctl restart -m fast`) a third of the way through; each ends by counting the stored rows, which
 * must be exactly one per distinct delivery.
 */
const SECRET = 'bench-receiver-secret';
const CONCURRENCY = 50;

function body(i: number, run: string): string {
  const id = `${run}-${String(i).padStart(7, '0')}`;
  return JSON.stringify({
    merchant: { merchantId: 'IBTMERCH0001', merchantTransactionId: `M-${id}`, merchantUserId: 'user-1' },
    accountInfo: {
      accountToken: 'acct-1',
      accountLabel: '****1234',
      accountType: 'PC',
      fiName: 'Maple Bank',
    },
    transaction: {
      transactionId: id,
      transactionType: 'DEBIT',
      transactionStatus: 'SUCCESS',
      transactionAmount: 100 + i,
      transactionFee: 30,
      currencyCode: 'CAD',
    },
  });
}

function startReceiver(databaseUrl: string): Promise<ReceiverProcess> {
  const profile = process.env.RECON_PROFILE;
  return startReceiverProcess(databaseUrl, SECRET, {
    readyPath: '/health/ready',
    env: profile ? { RECON_PROFILE: profile } : {},
    echoStderr: profile !== undefined && profile !== '',
  });
}

function post(agent: Agent, port: number, payload: string): Promise<{ status: number; retryAfter: number }> {
  return new Promise((resolve) => {
    const req = request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/notifications/transaction',
        headers: {
          authorization: `Bearer ${SECRET}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, retryAfter: Number(res.headers['retry-after'] ?? 0) }),
        );
        res.on('error', () => resolve({ status: 0, retryAfter: 0 }));
      },
    );
    req.on('error', () => resolve({ status: 0, retryAfter: 0 }));
    req.end(payload);
  });
}

interface RunStats {
  readonly seconds: number;
  readonly latenciesMs: number[];
  readonly retries: number;
  readonly statuses: Map<number, number>;
  readonly failed: number;
}

/** Sends `count` distinct deliveries with 50 senders; latency is per delivery, retries included. */
async function deliver(port: number, count: number, run: string, during?: () => Promise<void>) {
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latenciesMs: number[] = [];
  const statuses = new Map<number, number>();
  let retries = 0;
  let failed = 0;
  let next = 0;
  const start = performance.now();
  const sending = Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const payload = body(next++, run);
        const t0 = performance.now();
        for (let attempt = 0; ; attempt++) {
          const { status, retryAfter } = await post(agent, port, payload);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (status === 200) break;
          if ((status !== 0 && status < 500) || attempt > 400) {
            failed++;
            break;
          }
          retries++;
          await sleep(Math.min(retryAfter > 0 ? retryAfter * 1000 : 50, 250));
        }
        latenciesMs.push(performance.now() - t0);
      }
    }),
  );
  await during?.();
  await sending;
  const seconds = (performance.now() - start) / 1000;
  agent.destroy();
  return { seconds, latenciesMs, retries, statuses, failed } satisfies RunStats;
}

/** CPU seconds a process used so far (Linux /proc), or NaN elsewhere. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function countStored(url: string, run: string): Promise<{ rows: number; distinct: number }> {
  const r = await queryRows<{ rows: number; distinct: number }>(
    url,
    `select count(*)::int as rows, count(distinct transaction_id)::int as distinct
     from notifications where transaction_id like $1`,
    [`${run}-%`],
  );
  return r[0]!;
}

function describe(stats: RunStats, stored: { rows: number; distinct: number }, count: number): string {
  const codes = [...stats.statuses].map(([s, n]) => `${s === 0 ? 'conn err' : s}×${n}`).join(' ');
  const exact = stored.rows === count && stored.distinct === count && stats.failed === 0;
  return (
    `50 concurrent; p50 ${percentile(stats.latenciesMs, 50).toFixed(0)} ms, ` +
    `p99 ${percentile(stats.latenciesMs, 99).toFixed(0)} ms, max ${percentile(stats.latenciesMs, 100).toFixed(0)} ms; ` +
    `answers ${codes}; stored ${stored.rows} rows for ${count} deliveries${exact ? ' (each exactly once)' : ' — NOT EXACTLY ONCE'}`
  );
}

export async function benchReceiver(ctx: Pick<BenchContext, 'log' | 'newDatabase'>): Promise<BenchResult[]> {
  const count = Number(process.env.BENCH_RECEIVER_DELIVERIES ?? 2000);
  const results: BenchResult[] = [];

  const url = await ctx.newDatabase();
  const steady = await startReceiver(url);
  try {
    // A short warm-up (connections, JIT), then the measured run.
    await deliver(steady.port, 200, 'WARM');
    ctx.log(`receiver: ${count} deliveries, 50 concurrent`);
    const cpu0 = cpuSeconds(steady.child.pid);
    const stats = await deliver(steady.port, count, 'STEADY');
    const cpuMs = ((cpuSeconds(steady.child.pid) - cpu0) * 1000) / count;
    results.push({
      name: 'receiver, steady',
      rows: count,
      seconds: stats.seconds,
      note: `${describe(stats, await countStored(url, 'STEADY'), count)}; receiver CPU ${cpuMs.toFixed(2)} ms per delivery`,
    });
  } finally {
    steady.child.kill('SIGTERM');
  }

  ctx.log('receiver: the same with a PostgreSQL restart (pg_ctl restart -m fast) in the middle');
  const server = await startFaultPostgres();
  try {
    const receiver = await startReceiver(server.url);
    try {
      const stats = await deliver(receiver.port, count, 'RESTART', async () => {
        // A third of the way through at the steady rate.
        await sleep(Math.max(200, (results[0]!.seconds * 1000) / 3));
        await server.restart('fast');
      });
      results.push({
        name: 'receiver, PostgreSQL restart mid-run',
        rows: count,
        seconds: stats.seconds,
        note: `${describe(stats, await countStored(server.url, 'RESTART'), count)}; ${stats.retries} retries`,
      });
    } finally {
      receiver.child.kill('SIGTERM');
    }
  } finally {
    await server.close();
  }
  return results;
}

export const receiverSteps: BenchStep[] = [{ name: 'receiver', run: (ctx) => benchReceiver(ctx) }];
