import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../db/database-on-client.ts';
import { createPool } from '../../db/pool.ts';
import { addUser, createToken } from '../../workbench/auth/accounts.ts';
import { freePort } from '../../db/free-port.ts';
import { type FaultPostgres, startFaultPostgres } from '../support/fault-postgres.ts';
import { sample } from '../support/prometheus.ts';
import { spawnRecon } from '../support/recon-process.ts';

/**
 * `recon serve` as an OS process over a PostgreSQL that crashes: it stays alive, answers 503 (and
 * /health ready: false) while the database is down, and recovers by itself, sessions included. Its
 * RECON_METRICS_PORT listener keeps answering meanwhile, with recon_warehouse_up 0.
 */
let server: FaultPostgres;
let workbench: ChildProcess;
let base: string;
let metricsUrl: string;
let viewerToken: string;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  server = await startFaultPostgres();
  const pool = createPool(server.url, 1);
  const db = createDatabase(pool);
  await addUser(db, { username: 'alice', role: 'operator', password: PASSWORD });
  viewerToken = (await createToken(db, { name: 'prometheus', role: 'viewer' })).token;
  await db.destroy();
  const port = await freePort();
  const metricsPort = await freePort();
  base = `http://127.0.0.1:${port}`;
  metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  workbench = spawnRecon(server.url, ['serve', '--port', String(port)], {
    RECON_METRICS_PORT: String(metricsPort),
  }).child;
  await new Promise<void>((resolve, reject) => {
    workbench.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('workbench listening')) resolve();
    });
    workbench.once('exit', (code) => reject(new Error(`recon serve exited with ${code}`)));
  });
});

afterAll(async () => {
  if (workbench && workbench.exitCode === null) {
    workbench.kill('SIGTERM');
    await new Promise((r) => workbench.once('exit', r));
  }
  await server?.close();
});

async function get(path: string, cookie?: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${base}${path}`, { headers: cookie ? { cookie } : {} });
  return { status: res.status, body: await res.json() };
}

/** recon_warehouse_up from the RECON_METRICS_PORT listener, and the status of the main port's /metrics. */
async function scrape(): Promise<{ warehouseUp: number | undefined; mainPort: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const main = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${viewerToken}` } });
  await main.arrayBuffer();
  return { warehouseUp: sample(text, 'recon_warehouse_up', {}), mainPort: main.status };
}

describe('recon serve across a PostgreSQL crash', () => {
  it('answers 503 while the database is down and recovers by itself, sessions included', async () => {
    const signIn = await fetch(`${base}/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'alice', password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
    expect((await get('/api/discrepancies', cookie)).status).toBe(200);
    expect(await scrape()).toEqual({ warehouseUp: 1, mainPort: 200 });

    await server.crash();
    expect(await get('/health')).toEqual({
      status: 503,
      body: { alive: true, ready: false, database: 'unreachable' },
    });
    const down = await get('/api/discrepancies', cookie);
    expect(down.status).toBe(503);
    expect(down.body).toEqual({
      error: 'unavailable',
      message: 'the warehouse is unreachable or busy: retry shortly',
    });
    // The token is checked in the database: the main port's /metrics is a 503 like every other
    // route, and the separate listener is the one that can say why.
    expect(await scrape()).toEqual({ warehouseUp: 0, mainPort: 503 });
    expect(workbench.exitCode).toBeNull();

    await server.start();
    await expect
      .poll(async () => (await get('/health')).status, { timeout: 30_000, interval: 500 })
      .toBe(200);
    expect((await get('/api/discrepancies', cookie)).status).toBe(200);
    expect(await scrape()).toEqual({ warehouseUp: 1, mainPort: 200 });
    expect(workbench.exitCode).toBeNull();
  });
});
