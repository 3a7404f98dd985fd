import type { Command } from 'commander';
import type { Config } from '../config/config.ts';
import { MAX_REJECTED_HELP, wholeNumberArg } from './options.ts';
import { EXIT, runCommand } from './run.ts';

function collectIds(value: string, previous: number[]): number[] {
  return [...previous, wholeNumberArg(1)(value)];
}

export function registerNotifications(program: Command): void {
  const notifications = program
    .command('notifications')
    .description('the notification receiver and the notification history');
  notifications
    .command('serve')
    .description(
      'run the notification receiver (POST /notifications/transaction, POST /notifications/return, GET /health = /health/live, GET /health/ready) on PORT; callers send RECON_NOTIFICATION_SECRET as a bearer token or basic-auth password; RECON_NOTIFICATION_ALLOW limits caller CIDRs',
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--confirm',
      'confirm each stored notification through ConfirmTrans (needs the RECON_* provider settings)',
    )
    .action((opts: { host: string; confirm?: boolean }) =>
      runCommand((config) => serveNotifications(config, opts)),
    );
  notifications
    .command('replay')
    .description(
      'take quarantined deliveries into the notification history once the cause of their refusal is fixed: each is checked again as the receiver checks a delivery, stored with its original received_at and marked replayed; those still refused are listed with their reason. Safe to run again: a replayed delivery is never taken twice',
    )
    .option(
      '--id <quarantine_id>',
      'only this quarantined delivery (repeatable); default every one still waiting',
      collectIds,
      [],
    )
    .action((opts: { id: number[] }) => runCommand((config) => replayNotifications(config, opts)));
  notifications
    .command('import')
    .description(
      'import a notification history export: NDJSON lines {kind, received_at, payload}; same validation and dedupe as the receiver, original received_at kept; prints a JSON summary',
    )
    .argument('<file>', 'NDJSON file')
    .option('--max-rejected <n>', MAX_REJECTED_HELP, wholeNumberArg(0))
    .action((file: string, opts: { maxRejected?: number }) =>
      runCommand((config) => importNotifications(config, file, opts)),
    );
}

/** `recon notifications serve`: the receiver (and /metrics when asked for) until SIGINT or SIGTERM. */
async function serveNotifications(config: Config, opts: { host: string; confirm?: boolean }): Promise<void> {
  const { openDatabase } = await import('../db/connect.ts');
  const { startNotificationReceiver } = await import('../ingest/notifications/server.ts');
  const handle = await openDatabase(config, { longRunning: true });
  const { metricsSettings } = await import('../config/metrics.ts');
  const metricsAt = metricsSettings();
  const { createMetrics } = await import('../observability/metrics.ts');
  const metrics = metricsAt ? createMetrics() : undefined;
  const { loadAccounts } = await import('../config/accounts.ts');
  const accounts = loadAccounts();
  const { confirmPerAccount } = await import('../ingest/notifications/confirm-per-account.ts');
  // Each notification is confirmed with the credentials of the account it is filed under.
  const confirmations = opts.confirm ? confirmPerAccount(config, accounts) : undefined;
  const receiver = await startNotificationReceiver({
    ...(confirmations ? { confirm: confirmations.confirm } : {}),
    handle,
    config,
    accounts,
    port: config.port ?? 8080,
    host: opts.host,
    allow: config.notificationAllow ?? [],
    log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
    ...(metrics ? { metrics } : {}),
  });
  process.stdout.write(`notification receiver listening on ${receiver.url}\n`);
  const { startMetricsServer } = await import('../observability/serve-metrics.ts');
  const metricsServer =
    metrics && metricsAt ? await startMetricsServer({ metrics, ...metricsAt }) : undefined;
  if (metricsServer) process.stdout.write(`metrics at ${metricsServer.url}\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await receiver.close();
  await confirmations?.close();
  await metricsServer?.close();
  await handle.close();
}

/** `recon notifications replay`: quarantined deliveries checked again and stored once. */
async function replayNotifications(config: Config, opts: { id: number[] }): Promise<void> {
  const { openDatabase } = await import('../db/connect.ts');
  const { replayQuarantine } = await import('../ingest/notifications/replay-quarantine.ts');
  const { loadAccounts } = await import('../config/accounts.ts');
  const accounts = loadAccounts();
  const handle = await openDatabase(config);
  try {
    const summary = await replayQuarantine(handle.db, {
      accounts,
      ...(opts.id.length > 0 ? { ids: opts.id } : {}),
    });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    for (const s of summary.stillRefused) {
      process.stderr.write(`recon: quarantined delivery ${s.quarantineId} is still refused: ${s.reason}\n`);
    }
  } finally {
    await handle.close();
  }
}

/** `recon notifications import FILE`: EXIT.failed when no line of the file is a notification. */
async function importNotifications(
  config: Config,
  file: string,
  opts: { maxRejected?: number },
): Promise<number | void> {
  const { openInput } = await import('../ingest/load/open-input.ts');
  const { openDatabase } = await import('../db/connect.ts');
  const { importNotificationHistory } = await import('../ingest/notifications/import-history.ts');
  const input = await openInput(file);
  const handle = await openDatabase(config);
  try {
    const ids: number[] = [];
    const summary = await importNotificationHistory(handle.db, input, {
      fileName: file,
      ...(opts.maxRejected !== undefined ? { maxQuarantined: opts.maxRejected } : {}),
      onQuarantined: (id) => ids.push(id),
    });
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    if (summary.quarantined > 0) {
      process.stderr.write(
        `recon: warning: ${summary.quarantined} line(s) quarantined; list them with: recon warehouse psql -- -c "select quarantine_id, kind, reason from notification_quarantine_redacted where quarantine_id between ${Math.min(...ids)} and ${Math.max(...ids)} order by quarantine_id"\n`,
      );
    }
    if (summary.linesRead > 0 && summary.quarantined === summary.linesRead) {
      process.stderr.write(
        `recon: no line of ${file} is a notification (all ${summary.linesRead} quarantined): check that it is a notification history export, NDJSON {kind, received_at, payload}\n`,
      );
      return EXIT.failed;
    }
  } finally {
    await handle.close();
  }
}
