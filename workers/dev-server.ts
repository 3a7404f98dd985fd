import { mkdirSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { dirname } from 'node:path';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { NativeConnection } from '@temporalio/worker';
import { findTemporalCli } from './find-temporal-cli.ts';

/** An ephemeral Temporal dev server on 127.0.0.1, with a client and a worker connection to it. */
export interface DevServer {
  readonly address: string;
  readonly namespace: string;
  /** The Temporal web UI, when started with `ui: true`. */
  readonly uiUrl: string | null;
  readonly client: Client;
  readonly nativeConnection: NativeConnection;
  /** Stops the server (and closes the connections). Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts the Temporal CLI dev server (found by {@link findTemporalCli}) bound to 127.0.0.1 on free
 * ports. With `dbFile` its state (workflows, schedules) survives between commands, so
 * `recon backfill` run again re-attaches to a backfill it started before; without it the state is
 * in memory and gone at close.
 */
export async function startDevServer(
  options: { dbFile?: string; ui?: boolean; uiPort?: number; namespace?: string } = {},
): Promise<DevServer> {
  if (options.dbFile) mkdirSync(dirname(options.dbFile), { recursive: true });
  const namespace = options.namespace ?? 'default';
  const ui = options.ui ?? false;
  // The CLI's own choice of the UI's port is the frontend's plus 1000, taken or not: recon demo
  // failed with "can't set UI port …: address already in use" beside other dev servers.
  const uiPort = ui ? (options.uiPort ?? (await freePort())) : undefined;
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: findTemporalCli(),
      ip: '127.0.0.1',
      namespace,
      ui,
      ...(uiPort !== undefined ? { uiPort } : {}),
      ...(options.dbFile ? { dbFilename: options.dbFile } : {}),
      log: { format: 'text', level: 'error' },
      // No banner on stdout (commands print their results there); no newsfeed request from the UI:
      // nothing may reach an address other than 127.0.0.1.
      extraArgs: ['--output', 'none', ...(ui ? ['--ui-disable-news-fetch'] : [])],
    },
  });
  const uiUrl = uiPort !== undefined ? `http://127.0.0.1:${uiPort}` : null;
  let closed: Promise<void> | undefined;
  return {
    address: env.address,
    namespace,
    uiUrl,
    client: env.client,
    nativeConnection: env.nativeConnection,
    close: () => (closed ??= env.teardown()),
  };
}

/** A port of 127.0.0.1 that nothing listens on now (the system's choice for port 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
