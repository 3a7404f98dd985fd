import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, createPool } from '../../db/connect.ts';
import { addUser } from '../../reconcile/workbench/auth/accounts.ts';
import { freePort } from '../../db/free-port.ts';
import { type FaultPostgres, startFaultPostgres } from '../support/fault-postgres.ts';
import { spawnRecon } from '../support/recon-process.ts';

/**
 * `recon serve` as an OS process over a PostgreSQL that crashes: it stays alive, answers 503 (and
 * /health ready: false) while the database is down, and recovers by itself, sessions included.
 */
let server: FaultPostgres;
let workbench: ChildProcess;
let base: string;
const PASSWORD = 'correct horse battery';

beforeAll(async () => {
  server = await startFaultPostgres();
  const pool = createPool(server.url, 1);
  const db = createDatabase(pool);
  await addUser(db, { username: 'alice', role: 'operator', password: PASSWORD });
  await db.destroy();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  workbench = spawnRecon(server.url, ['serve', '--port', String(port)]).child;
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
    expect(workbench.exitCode).toBeNull();

    await server.start();
    await expect
      .poll(async () => (await get('/health')).status, { timeout: 30_000, interval: 500 })
      .toBe(200);
    expect((await get('/api/discrepancies', cookie)).status).toBe(200);
    expect(workbench.exitCode).toBeNull();
  });
});
