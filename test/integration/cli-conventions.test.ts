import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram } from '../../cli/program.ts';
import type { DatabaseHandle } from '../../db/connect.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';
import { recon as runRecon, type ReconRun, ROOT } from '../support/recon-process.ts';
import { insertLedger, insertLoad, insertTransactions } from '../support/recon-rows.ts';

// The conventions of docs/reference.md ("Exit codes and errors"), checked as a user meets them: `node bin/recon.mjs ...` as a
// child process, its exit code and its stderr. A usage error is exactly two lines: "recon: <what>" and
// "see recon <command> --help".

const FIXTURES = join(ROOT, 'test/fixtures');

let handle: DatabaseHandle;
let dir: string;
beforeAll(async () => {
  handle = await createTestDatabase();
  dir = mkdtempSync(join(tmpdir(), 'recon-cli-conventions-'));
});
afterAll(async () => {
  await handle?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function recon(args: string[], env: Record<string, string> = {}): Promise<ReconRun> {
  return runRecon(handle.connectionString, args, { RECON_DATA_DIR: join(dir, 'data'), ...env });
}

function expectUsageError(r: ReconRun, command: string, firstLine: RegExp): void {
  expect(r.code, r.stderr).toBe(2);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(2);
  expect(lines[0]).toMatch(firstLine);
  expect(lines[1]).toBe(`see ${command} --help`);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stderr).not.toContain('Usage:');
  expect(r.stdout).toBe('');
}

describe('recon --version', () => {
  it('prints the version of package.json', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await recon(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });
});

describe.concurrent(
  'usage errors: one line naming the option and what is allowed, a --help hint, exit 2',
  () => {
    it('a date written another way', async () => {
      const r = await recon(['report', '--from', '2026/04/01', '--to', '2026-04-30']);
      expectUsageError(r, 'recon report', /^recon: --from "2026\/04\/01" is not valid: .*YYYY-MM-DD$/);
    });

    it('a date that does not exist never reaches PostgreSQL', async () => {
      const r = await recon(['report', '--from', '2026-02-30', '--to', '2026-03-31']);
      expectUsageError(
        r,
        'recon report',
        /^recon: --from "2026-02-30" is not valid: give a date that exists/,
      );
    });

    it('a reversed range', async () => {
      const r = await recon(['report', '--from', '2026-04-30', '--to', '2026-04-01']);
      expectUsageError(r, 'recon report', /^recon: --from 2026-04-30 is after --to 2026-04-01/);
      const rec = await recon(['reconcile', '--from', '2026-04-30', '--to', '2026-04-01']);
      expectUsageError(rec, 'recon reconcile', /^recon: --from 2026-04-30 is after --to 2026-04-01/);
    });

    it('a bad id or number, without a stack trace', async () => {
      const ack = await recon(['discrepancies', 'ack', 'abc', '--note', 'checked', '--by', 'ana']);
      expectUsageError(
        ack,
        'recon discrepancies ack',
        /^recon: <id> "abc" is not valid: give a whole number/,
      );
      const grace = await recon([
        'reconcile',
        '--from',
        '2026-04-01',
        '--to',
        '2026-04-02',
        '--grace-days',
        '-1',
      ]);
      expectUsageError(
        grace,
        'recon reconcile',
        /^recon: --grace-days "-1" is not valid: give a whole number/,
      );
      const window = await recon([
        'backfill',
        '--from',
        '2026-04-01',
        '--to',
        '2026-04-02',
        '--window-days',
        '41',
      ]);
      expectUsageError(window, 'recon backfill', /^recon: --window-days "41" is not valid: .*from 1 to 40$/);
    });

    it('a missing option: not the whole help', async () => {
      const r = await recon(['pull']);
      expectUsageError(r, 'recon pull', /^recon: --source is required: give one of report-transactions, /);
      const to = await recon(['pull', '--source', 'report-returns', '--from', '2026-04-01']);
      expectUsageError(to, 'recon pull', /^recon: --to is required: give YYYY-MM-DD$/);
    });

    it('an unknown option, value or command', async () => {
      const option = await recon(['report', '--from', '2026-04-01', '--to', '2026-04-02', '--bogus']);
      expectUsageError(
        option,
        'recon report',
        /^recon: unknown option '--bogus': the options are --from, --to/,
      );
      const source = await recon(['pull', '--source', 'nope', '--from', '2026-04-01', '--to', '2026-04-02']);
      expectUsageError(
        source,
        'recon pull',
        /^recon: --source "nope" is not valid: use one of report-transactions/,
      );
      const group = await recon(['discrepancies']);
      expectUsageError(group, 'recon discrepancies', /^recon: missing command: use one of list, show, ack$/);
      const format = await recon(['import', '--format', 'xml', join(FIXTURES, 'ledger/ledger.csv')]);
      expectUsageError(format, 'recon import', /^recon: --format "xml" is not valid: use legacy, /);
    });

    it('an output file that cannot be written fails before any work', async () => {
      const html = await recon([
        'report',
        '--from',
        '2026-04-01',
        '--to',
        '2026-04-02',
        '--html',
        join(dir, 'no/such/r.html'),
      ]);
      expectUsageError(
        html,
        'recon report',
        /^recon: --html ".*r\.html" is not valid: the folder .* does not exist/,
      );
      const csv = await recon(['report', '--from', '2026-04-01', '--to', '2026-04-02', '--csv', dir]);
      expectUsageError(csv, 'recon report', /^recon: --csv ".*" is not valid: it is a folder/);
    });
  },
);

describe('--help of every command', () => {
  function allCommands(command: Command): Command[] {
    return [command, ...command.commands.flatMap(allCommands)];
  }

  it('marks required options, shows an example, and spells dates YYYY-MM-DD', () => {
    for (const command of allCommands(buildProgram())) {
      const name = command.name();
      // commander's help text, with the text added after it (the example).
      let help = '';
      command.configureOutput({ writeOut: (s) => (help += s) });
      command.outputHelp();
      expect(help, name).toMatch(/\nExample:\n {2}\$ (\w+=\S+ )?recon /);
      expect(help, name).not.toMatch(/<(date|D|iso)>/);
      for (const option of command.options) {
        if (option.mandatory) expect(option.description, `${name} ${option.long}`).toMatch(/\(required\)$/);
        if (option.long === '--from' || option.long === '--to') {
          expect(option.flags, `${name} ${option.long}`).toBe(`${option.long} <YYYY-MM-DD>`);
        }
      }
    }
  });

  it('as printed by the process', async () => {
    const r = await recon(['pull', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--source <source>\s+what to pull \(required\)/);
    expect(r.stdout).toMatch(/--from <YYYY-MM-DD>\s+first Eastern day \(required\)/);
    expect(r.stdout).toContain('Example:\n  $ recon pull --source report-transactions --from 2026-04-01');
    const viaHelp = await recon(['help', 'report']);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toMatch(/^Usage: recon report \[options\]\n/);
  });
});

describe('loads that reject rows', () => {
  it('warn on stderr with the query that lists them; the JSON summary is unchanged', async () => {
    const r = await recon([
      'import',
      '--format',
      'legacy',
      '--query-type',
      '5',
      join(FIXTURES, 'legacy/type5-bad-rows.csv'),
    ]);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout) as { loadId: number; rowsRejected: number };
    expect(summary.rowsRejected).toBe(6);
    expect(r.stderr).toBe(
      `recon: warning: 6 row(s) rejected by load ${summary.loadId}; list them with: recon warehouse psql -- -c "select line_number, reason, raw_redacted from rejected_rows_redacted where load_id = ${summary.loadId} order by line_number"\n`,
    );
  });

  it('--max-rejected: beyond it the load fails with exit 3 and keeps nothing', async () => {
    const before = await handle.db.selectFrom('merchant_ledger').select('merchant_transaction_id').execute();
    const r = await recon(['ledger', 'import', '--max-rejected', '2', join(FIXTURES, 'ledger/ledger.csv')]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(
      /^recon: .*ledger\.csv: more than 2 row\(s\) rejected \(--max-rejected 2\); the load was rolled back/,
    );
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    const after = await handle.db.selectFrom('merchant_ledger').select('merchant_transaction_id').execute();
    expect(after).toEqual(before);
    const load = await handle.db
      .selectFrom('loads')
      .select(['load_id', 'status'])
      .where('source', '=', 'ledger')
      .orderBy('load_id', 'desc')
      .executeTakeFirstOrThrow();
    expect(load.status).toBe('failed');
    const rejected = await handle.db
      .selectFrom('rejected_rows')
      .select('load_id')
      .where('load_id', '=', load.load_id)
      .execute();
    expect(rejected).toHaveLength(0);

    const within = await recon([
      'ledger',
      'import',
      '--max-rejected',
      '3',
      join(FIXTURES, 'ledger/ledger.csv'),
    ]);
    expect(within.code).toBe(0);
    expect(JSON.parse(within.stdout)).toMatchObject({ rowsLoaded: 3, rowsRejected: 3 });
  });

  it('notifications import: every line quarantined exits non-zero; --max-rejected keeps nothing', async () => {
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(bad, 'not json\n{"kind":"nope","received_at":"2026-03-02T15:00:00Z","payload":{}}\n');
    const all = await recon(['notifications', 'import', bad]);
    expect(all.code).toBe(1);
    expect(JSON.parse(all.stdout)).toEqual({ linesRead: 2, stored: 0, duplicates: 0, quarantined: 2 });
    expect(all.stderr).toMatch(
      /^recon: warning: 2 line\(s\) quarantined; list them with: recon warehouse psql -- -c "select .* from notification_quarantine_redacted /,
    );
    expect(all.stderr).toContain('is a notification (all 2 quarantined)');

    const quarantined = async () =>
      (await handle.db.selectFrom('notification_quarantine').select('quarantine_id').execute()).length;
    const kept = await quarantined();
    const limited = await recon(['notifications', 'import', '--max-rejected', '1', bad]);
    expect(limited.code).toBe(3);
    expect(limited.stdout).toBe('');
    expect(await quarantined()).toBe(kept);
  });
});

describe('recon discrepancies list / show / ack', () => {
  let amountId: number;
  beforeAll(async () => {
    const loadId = await insertLoad(handle.db, 'report-transactions');
    await insertTransactions(handle.db, loadId, [
      { transaction_id: 'T-AMT', amount_cents: 123456 },
      { transaction_id: 'T-USD', currency: 'USD', amount_cents: 5000 },
    ]);
    await insertLedger(handle.db, [{ merchant_transaction_id: 'M-T-AMT', amount_cents: 123400 }]);
    await reconcileRange(handle.db, { from: '2026-03-02', to: '2026-03-02', now: '2026-03-20T12:00:00Z' });
    const row = await handle.db
      .selectFrom('discrepancies')
      .select('discrepancy_id')
      .where('kind', '=', 'amount_mismatch')
      .executeTakeFirstOrThrow();
    amountId = row.discrepancy_id;
  });

  it('lists with filters, as JSON with the currency beside the cents, or as a table', async () => {
    const json = await recon([
      'discrepancies',
      'list',
      '--from',
      '2026-03-02',
      '--to',
      '2026-03-02',
      '--json',
    ]);
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as { kind: string; currency: string; transaction_id: string }[];
    expect(rows.map((r) => `${r.kind} ${r.transaction_id} ${r.currency}`).sort()).toEqual(
      expect.arrayContaining(['amount_mismatch T-AMT CAD', 'missing_in_ledger T-USD USD']),
    );
    const usd = await recon(['discrepancies', 'list', '--currency', 'usd', '--json']);
    expect((JSON.parse(usd.stdout) as { currency: string }[]).every((r) => r.currency === 'USD')).toBe(true);
    const kind = await recon([
      'discrepancies',
      'list',
      '--kind',
      'amount_mismatch',
      '--status',
      'open',
      '--json',
    ]);
    expect(JSON.parse(kind.stdout)).toEqual([
      expect.objectContaining({
        discrepancy_id: amountId,
        kind: 'amount_mismatch',
        currency: 'CAD',
        expected_amount_cents: 123456,
        actual_amount_cents: 123400,
        difference_cents: -56,
      }),
    ]);
    const table = await recon(['discrepancies', 'list', '--kind', 'amount_mismatch']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      /amount_mismatch\s+open\s+T-AMT\s+M-T-AMT\s+CAD 1,234\.56\s+CAD 1,234\.00\s+CAD -0\.56\n/,
    );
    const empty = await recon(['discrepancies', 'list', '--from', '2027-01-01', '--to', '2027-01-31']);
    expect(empty.stdout).toBe('no discrepancy matches these filters\n');
    const badKind = await recon(['discrepancies', 'list', '--kind', 'oops']);
    expectUsageError(
      badKind,
      'recon discrepancies list',
      /^recon: --kind "oops" is not valid: use one of missing_in_ledger/,
    );
  });

  it('shows one discrepancy with its evidence and history', async () => {
    const r = await recon(['discrepancies', 'show', String(amountId)]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^discrepancy ${amountId}: amount_mismatch \\(open\\), business date 2026-03-02`),
    );
    expect(r.stdout).toMatch(
      /provider transaction:\n {2}transaction_id: T-AMT\n[^]*amount_cents: CAD 1,234\.56/,
    );
    expect(r.stdout).toMatch(
      /ledger entry:\n {2}merchant_transaction_id: M-T-AMT\n[^]*amount_cents: CAD 1,234\.00/,
    );
    expect(r.stdout).toContain('notifications: none');
    expect(r.stdout).toMatch(/history:\n {2}2026-03-20 12:00:00\+00 {2}opened /);
    const json = await recon(['discrepancies', 'show', String(amountId), '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      discrepancy: { discrepancy_id: amountId },
      evidence: {
        providerTransaction: { transaction_id: 'T-AMT', currency: 'CAD' },
        ledgerEntry: { amount_cents: 123400 },
      },
      events: [{ event: 'opened' }],
    });
    const missing = await recon(['discrepancies', 'show', '999999']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe(
      'recon: discrepancy 999999 does not exist: check the id with recon discrepancies list\n',
    );
  });

  it('ack refuses an empty note and keeps the earlier acknowledgement in the events', async () => {
    const empty = await recon(['discrepancies', 'ack', String(amountId), '--note', '  ', '--by', 'ana']);
    expectUsageError(
      empty,
      'recon discrepancies ack',
      /^recon: --note " {2}" is not valid: give a non-empty text$/,
    );
    expect(
      await handle.db
        .selectFrom('discrepancy_events')
        .select('event')
        .where('discrepancy_id', '=', amountId)
        .where('event', '=', 'acknowledged')
        .execute(),
    ).toHaveLength(0);

    const first = await recon([
      'discrepancies',
      'ack',
      String(amountId),
      '--note',
      'ledger rounding',
      '--by',
      'ana',
    ]);
    expect(first.code).toBe(0);
    const second = await recon([
      'discrepancies',
      'ack',
      String(amountId),
      '--note',
      'fixed in the ledger',
      '--by',
      'bo',
    ]);
    expect(second.code).toBe(0);
    const events = await handle.db
      .selectFrom('discrepancy_events')
      .select('details')
      .where('discrepancy_id', '=', amountId)
      .where('event', '=', 'acknowledged')
      .orderBy('event_id')
      .execute();
    expect(events.map((e) => e.details)).toEqual([
      { by: 'ana', note: 'ledger rounding' },
      {
        by: 'bo',
        note: 'fixed in the ledger',
        previous: { by: 'ana', note: 'ledger rounding', at: expect.any(String) },
      },
    ]);
    const row = await handle.db
      .selectFrom('discrepancies')
      .select(['status', 'note', 'acknowledged_by'])
      .where('discrepancy_id', '=', amountId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'acknowledged', note: 'fixed in the ledger', acknowledged_by: 'bo' });
  });
});

describe.concurrent('unreachable services: the address and what to check, one line, no secret', () => {
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  it('Temporal', async () => {
    const port = await closedPort();
    const r = await recon(['schedule', 'describe'], { TEMPORAL_ADDRESS: `127.0.0.1:${port}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^recon: cannot reach Temporal at 127\\.0\\.0\\.1:${port} \\(.+\\): check TEMPORAL_ADDRESS and that the Temporal server is running and reachable from here\\n$`,
      ),
    );
  });

  it('the provider', async () => {
    const port = await closedPort();
    const secret = 'client-secret-never-printed';
    const r = await recon(
      ['pull', '--source', 'report-returns', '--from', '2026-03-01', '--to', '2026-03-02'],
      {
        RECON_BASE_URL: `http://127.0.0.1:${port}`,
        RECON_AUTH_URL: `http://127.0.0.1:${port}`,
        RECON_CLIENT_ID: 'client-1',
        RECON_CLIENT_SECRET: secret,
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^recon: token request: no answer from the provider at 127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\) after 4 attempt\\(s\\): check RECON_AUTH_URL and that the provider is reachable from here, then retry\\n$`,
      ),
    );
    expect(r.stderr).not.toContain(secret);
  });
});
