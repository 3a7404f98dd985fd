import { type Command, Option } from 'commander';
import type { Config } from '../config/config.ts';
import {
  dateArg,
  fractionArg,
  instantArg,
  nonNegativeArg,
  outputFileArg,
  wholeNumberArg,
} from './options.ts';
import { runCommand } from './run.ts';

interface SandboxCliOptions {
  port?: number;
  seed: string;
  transactions: number;
  from: string;
  to: string;
  asOf?: string;
  notifyUrl?: string;
  faultErrorRate?: number;
  faultRateLimitRate?: number;
  faultRetryAfter?: string;
  faultSlowMs?: number;
  faultCutRate?: number;
  faultCutAfterBytes?: number;
  faultTruncateZip?: boolean;
  faultTokenTtlMs?: number;
  faultLegacyErrorPage?: 'login-expired' | 'invalid-merchant-pass';
  faultExtraColumn?: boolean;
  faultShortBodyBytes?: number;
  log?: boolean;
  notifyHistory?: boolean;
  writeLedger?: string;
  writeTruth?: string;
}

export function registerSandbox(program: Command): void {
  withSandboxOptions(
    program
      .command('sandbox')
      .description(
        'run the simulated provider on 127.0.0.1 (token, report, status, ConfirmTrans, interactive, legacy query) and print the RECON_* variables that point recon pull at it',
      ),
  ).action((o: SandboxCliOptions) => runCommand((config) => runSandbox(config, o)));
}

/** The history, fault and output options of `recon sandbox`. */
function withSandboxOptions(c: Command): Command {
  return c
    .option('--port <port>', 'TCP port (default: PORT, else any free port)', wholeNumberArg(0, 65535))
    .option('--seed <seed>', 'history seed', '1')
    .option('--transactions <n>', 'transactions in the history', wholeNumberArg(1), 1000)
    .option('--from <YYYY-MM-DD>', 'first Eastern day of the history', dateArg, '2026-10-20')
    .option('--to <YYYY-MM-DD>', 'last Eastern day of the history', dateArg, '2026-11-10')
    .option(
      '--as-of <instant>',
      'statuses as known at this ISO-8601 instant (default: all settled)',
      instantArg,
    )
    .option(
      '--notify-url <url>',
      'merchant notification receiver (RECON_NOTIFICATION_SECRET is sent as bearer)',
    )
    .option('--fault-error-rate <0..1>', 'fraction of data requests answered 500', fractionArg)
    .option('--fault-rate-limit-rate <0..1>', 'fraction of data requests answered 429', fractionArg)
    .option('--fault-retry-after <value>', 'Retry-After of 429 answers: seconds or an HTTP date', '1')
    .option('--fault-slow-ms <ms>', 'delay before every data response', nonNegativeArg)
    .option('--fault-cut-rate <0..1>', 'fraction of report/legacy bodies cut mid-way', fractionArg)
    .option('--fault-cut-after-bytes <n>', 'bytes sent before a cut', wholeNumberArg(0), 2048)
    .option('--fault-truncate-zip', 'zipped reports lose their end (no central directory)')
    .option(
      '--fault-token-ttl-ms <ms>',
      'tokens stop working after this, whatever expires_in says',
      nonNegativeArg,
    )
    .addOption(
      new Option(
        '--fault-legacy-error-page <page>',
        'the legacy query answers 200 with this page instead of CSV',
      ).choices(['login-expired', 'invalid-merchant-pass']),
    )
    .option('--fault-extra-column', 'every legacy line gets one more column')
    .option(
      '--fault-short-body-bytes <n>',
      'report and legacy bodies end cleanly (complete HTTP response) after this many bytes',
      wholeNumberArg(0),
    )
    .option(
      '--notify-history',
      'with --notify-url: also send the notifications of the whole history at start',
    )
    .option(
      '--write-ledger <file>',
      "write the merchant's ledger derived from the same history (NDJSON, for recon ledger import); the sandbox then serves that merchant view's history",
      outputFileArg,
    )
    .option(
      '--write-truth <file>',
      'write the ground truth of that merchant view (expected discrepancies, JSON)',
      outputFileArg,
    )
    .option('--log', 'print one line per request (method, path, status) on stderr');
}

/** `recon sandbox`: serves until SIGINT or SIGTERM. */
async function runSandbox(config: Config, o: SandboxCliOptions): Promise<void> {
  const { startSandbox } = await import('../sandbox/server.ts');
  const seed = /^\d+$/.test(o.seed) ? Number(o.seed) : o.seed;
  const history = o.writeLedger || o.writeTruth ? await writeMerchantView(o, seed) : undefined;
  const sandbox = await startSandbox({
    history,
    port: o.port ?? config.port ?? 0,
    seed,
    transactions: o.transactions,
    from: o.from,
    to: o.to,
    asOf: o.asOf,
    notifyUrl: o.notifyUrl,
    notifySecret: config.notificationSecret,
    faults: {
      errorRate: o.faultErrorRate,
      rateLimitRate: o.faultRateLimitRate,
      retryAfter: o.faultRetryAfter,
      slowMs: o.faultSlowMs,
      cutRate: o.faultCutRate,
      cutAfterBytes: o.faultCutAfterBytes,
      truncateZip: o.faultTruncateZip === true,
      tokenTtlMs: o.faultTokenTtlMs,
      legacyErrorPage: o.faultLegacyErrorPage,
      extraColumn: o.faultExtraColumn === true,
      shortBodyBytes: o.faultShortBodyBytes,
    },
    log: o.log ? (line) => process.stderr.write(`${line}\n`) : undefined,
  });
  // The sandbox's own throwaway credentials are printed on purpose: they are what a user needs
  // to point recon pull at it, and they open nothing else.
  const env = { ...sandbox.env(), RECON_ENVIRONMENT: 'staging' };
  process.stdout.write(
    `# sandbox provider listening; transaction API at ${sandbox.transactionBaseUrl}\n` +
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}\n`)
        .join('') +
      '# put these in a staging env file (or export them), then: recon pull --source report-transactions --from ... --to ...\n',
  );
  if (o.notifyHistory && o.notifyUrl) {
    void sandbox
      .notify()
      .then((r) => process.stderr.write(`# notifications: ${r.delivered} of ${r.sent} delivered\n`));
  }
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await sandbox.close();
}

/**
 * Derives area 5's merchant view (sandbox/merchant-view.ts) from the same options, writes the
 * ledger and the ground truth, and returns its history, so that what the sandbox serves is exactly
 * what the truth was computed from (the view sets the history's legacy conflict rate).
 */
async function writeMerchantView(o: SandboxCliOptions, seed: number | string) {
  const { writeFile } = await import('node:fs/promises');
  const { deriveMerchantView } = await import('../sandbox/merchant-view.ts');
  const view = deriveMerchantView({ seed, transactions: o.transactions, from: o.from, to: o.to });
  if (o.writeLedger) {
    const lines = view.ledger.map(({ kind: _kind, ...row }) => `${JSON.stringify(row)}\n`);
    await writeFile(o.writeLedger, lines.join(''));
  }
  if (o.writeTruth) {
    const truth = {
      asOf: view.asOf,
      range: view.range,
      feeSchedule: view.feeSchedule,
      expected: view.expected,
    };
    await writeFile(o.writeTruth, `${JSON.stringify(truth, null, 2)}\n`);
  }
  return view.history;
}
