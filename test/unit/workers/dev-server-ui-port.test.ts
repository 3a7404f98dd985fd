import { createServer } from 'node:net';
import { describe, expect, it, vi } from 'vitest';

/**
 * The dev server's web UI gets a port chosen free on 127.0.0.1, not the Temporal CLI's default of the
 * frontend's port plus 1000, which another process may hold: `recon demo` then failed to start
 * ("can't set UI port 34627: … address already in use") on a machine running other dev servers.
 * The Temporal SDK's server start is replaced by one that records what it was asked.
 */

const asked: { server?: { uiPort?: number; ui?: boolean } }[] = [];
vi.mock('@temporalio/testing', () => ({
  TestWorkflowEnvironment: {
    createLocal: async (options: { server?: { uiPort?: number; ui?: boolean } }) => {
      asked.push(options);
      return { address: '127.0.0.1:7233', client: {}, nativeConnection: {}, teardown: async () => {} };
    },
  },
}));
vi.mock('../../../workers/find-temporal-cli.ts', () => ({ findTemporalCli: () => '/bin/false' }));

const { startDevServer } = await import('../../../workers/dev-server.ts');

async function listenable(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('startDevServer with its web UI', () => {
  it('asks for a UI port that is free, and says it', async () => {
    const server = await startDevServer({ ui: true });
    const uiPort = asked.at(-1)?.server?.uiPort;
    expect(uiPort).toBeTypeOf('number');
    expect(uiPort).not.toBe(8233);
    expect(await listenable(uiPort!)).toBe(true);
    expect(server.uiUrl).toBe(`http://127.0.0.1:${uiPort}`);
    await server.close();
  });

  it('asks for none without the UI, and keeps a port it is given', async () => {
    await startDevServer({});
    expect(asked.at(-1)?.server?.uiPort).toBeUndefined();
    const given = await startDevServer({ ui: true, uiPort: 18233 });
    expect(asked.at(-1)?.server?.uiPort).toBe(18233);
    expect(given.uiUrl).toBe('http://127.0.0.1:18233');
  });
});
