import { Readable } from 'node:stream';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import type { Database } from '../../db/database.ts';
import { loadLedger } from '../../ingest/load/load-ledger.ts';
import { loadReport, type LoadRequest } from '../../ingest/load/load-report.ts';
import { PERSONAL_MARK, redactPersonal } from '../../domain/privacy.ts';
import { followUpNonFinal } from '../../ingest/follow-up/follow-up-non-final.ts';
import type { LookupStatus } from '../../ingest/follow-up/status-answer.ts';
import { importNotificationHistory } from '../../ingest/notifications/import-history.ts';
import { type NotificationReceiver, startNotificationReceiver } from '../../ingest/notifications/server.ts';
import { reconcileRange } from '../../reconcile/reconcile-range.ts';
import { createTestDatabase } from '../support/database.ts';

// Consumers' personal data is planted through every input path (legacy 5 and 6, a restatement,
// both report formats, the notification receiver and history import, the ledger, status lookups,
// rejected lines and refused files). Then every column of every table and view that recon_analyst
// can select is read AS recon_analyst and searched for the planted values: zero hits is the only pass.

const SECRET = 'notify-secret-for-privacy';
const EMAIL = {
  legacy5: 'lena.five@plant-privacy.example',
  legacy6: 'olaf.six@plant-privacy.example',
  restated: 'rita.restated@plant-privacy.example',
  json: 'jo.json@plant-privacy.example',
  csv: 'cy.csv@plant-privacy.example',
  notified: 'nora.notified@plant-privacy.example',
  imported: 'ivan.imported@plant-privacy.example',
  ledger: 'lea.ledger@plant-privacy.example',
  rejected: 'rob.rejected@plant-privacy.example',
  header: 'hugo.header@plant-privacy.example',
};
const ACCOUNT = '481-20375-****8642';
const ACCOUNT_PLAIN = '482-20376-000987658643';
const LABEL = '****8642';
const TOKEN = 'TOKplant7f3a9c2e41b0';
const TOKEN_IMPORTED = 'TOKplant00d1e2f3a4b5';
const NAME = 'Quixmorely';
/** Every planted value (an analyst must find none of them anywhere). */
const NEEDLES = [...Object.values(EMAIL), ACCOUNT, ACCOUNT_PLAIN, LABEL, TOKEN, TOKEN_IMPORTED, NAME];

let h: DatabaseHandle;
let receiver: NotificationReceiver;
const logs: string[] = [];
const errors: string[] = [];
const text = (content: string) => Readable.from([Buffer.from(content)]);

const legacy = (queryType: '5' | '6', fileName: string): LoadRequest => ({
  source: 'legacy-transactions',
  format: 'legacy',
  queryType,
  fileName,
  origin: 'file',
  environment: 'staging',
});
const report = (format: 'report-json' | 'report-csv', fileName: string): LoadRequest => ({
  source: 'report-transactions',
  format,
  queryType: 'TRANSACTION',
  fileName,
  origin: 'file',
  environment: 'staging',
});

/** A legacy type 5 line (17 fields); type 6 adds return code and date. */
const legacyLine = (id: string, status: string, fee: string, email: string, account: string, six = false) =>
  `20260310,D,ORD-${id},${id},0000012550,CAD,${status},IU1,${fee},MERCH001,,C,player-1,101500,CA,${email},${account}${six ? ',,' : ''}`;

const jsonRecord = (id: string, status: string) => ({
  product: 'IBT',
  merchantId: '10001',
  merchantUserId: 'player-7731',
  merchantTransactionId: `ORD-${id}`,
  productUserId: 'PU-1',
  transactionId: id,
  transactionNotifyStatus: 'C',
  transactionRegion: 'ON',
  transactionAmount: 12550,
  currencyCode: 'CAD',
  countryCode: 'CA',
  transactionType: 'DEBIT',
  transactionStatus: status,
  transactionFee: 125,
  transactionDateTime: '2026-03-10T15:00:00.000000Z',
  externalReference: 'EXT-1',
  errorCode: null,
  errorDescription: null,
  transactionPaymentMethod: 'EFT',
  // Members the parser does not know: kept in raw only.
  consumerEmail: EMAIL.json,
  accountInfo: { accountToken: TOKEN, accountLabel: LABEL },
  consumer: { contactInfo: { sender: { name: { firstName: 'Zed', lastName: NAME } } } },
});

const CSV_HEADER =
  'Transaction Date,Transaction Type,Merchant Transaction ID,Transaction ID,Transaction Amount,Currency,Transaction Status,Internal User ID,Transaction Fee,Merchant ID,Request Type,Payment Method,Merchant User ID,Error Code,Error Description,Country,Device Type,External Reference,Product,Payment Notification Status,Payment Region,Consumer Email,Bank Account';
const csvLine = (id: string) =>
  `2026-03-10T16:00:00Z,DEBIT,ORD-${id},${id},4200,CAD,SUCCESSFUL,PU-2,40,10001,Interactive,EFT,player-2,,,CA,DESKTOP,EXT-2,IBT,C,ON,${EMAIL.csv},${ACCOUNT_PLAIN}`;

const notification = (id: string, token: string) => ({
  merchant: { merchantId: 'IBTMERCH0001', merchantTransactionId: `ORD-${id}`, merchantUserId: 'user-1' },
  accountInfo: { accountToken: token, accountLabel: LABEL, accountType: 'PC', fiName: 'Maple Bank' },
  transaction: {
    transactionId: id,
    transactionType: 'DEBIT',
    transactionStatus: 'SUCCESS',
    transactionAmount: 12550,
    transactionFee: 125,
    currencyCode: 'CAD',
    dataPassThrough: EMAIL.notified,
  },
});

async function post(payload: string): Promise<number> {
  const res = await fetch(`${receiver.url}/notifications/transaction`, {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
    body: payload,
  });
  errors.push(await res.text());
  return res.status;
}

async function refused(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    errors.push((error as Error).message);
    return (error as Error).message;
  }
  throw new Error('expected the load to be refused');
}

beforeAll(async () => {
  h = await createTestDatabase();
  receiver = await startNotificationReceiver({
    handle: h,
    config: { notificationSecret: SECRET },
    port: 0,
    maxBodyBytes: 8192,
    log: (line) => logs.push(line),
  });

  // Legacy 5, then a restatement of the same rows (row_history keeps the earlier raw line).
  await loadReport(
    h,
    legacy('5', 'legacy5.csv'),
    text(
      `${legacyLine('ET9100000001', 'S', '0000000125', EMAIL.legacy5, ACCOUNT)}\n${legacyLine('ET9100000002', 'S', '0000000125', EMAIL.restated, ACCOUNT_PLAIN)}\n`,
    ),
  );
  const restated = await loadReport(
    h,
    legacy('5', 'legacy5-restated.csv'),
    text(`${legacyLine('ET9100000002', 'F', '0000000000', EMAIL.restated, ACCOUNT_PLAIN)}\n`),
  );
  expect(restated.rowsUpdated).toBe(1);
  await loadReport(
    h,
    legacy('6', 'legacy6.csv'),
    text(`${legacyLine('ET9100000003', 'S', '0000000250', EMAIL.legacy6, ACCOUNT, true)}\n`),
  );
  // A rejected line: its date field holds an e-mail, which the reason must not quote. The file also
  // repeats an unchanged record: a file of which no line is a record is refused whole instead.
  await loadReport(
    h,
    legacy('5', 'legacy5-bad.csv'),
    text(
      `${legacyLine('ET9100000001', 'S', '0000000125', EMAIL.legacy5, ACCOUNT)}\n${legacyLine('ET9100000004', 'S', '0000000125', EMAIL.rejected, ACCOUNT).replace('20260310', EMAIL.rejected)}\n`,
    ),
  );

  // Report JSON, then restated (PENDING, then SUCCESSFUL): row_history holds the JSON raw.
  await loadReport(
    h,
    report('report-json', 'report.json'),
    text(JSON.stringify([jsonRecord('IBT91000000001', 'PENDING')])),
  );
  const json2 = await loadReport(
    h,
    report('report-json', 'report-2.json'),
    text(
      JSON.stringify([
        jsonRecord('IBT91000000001', 'SUCCESSFUL'),
        { ...jsonRecord('IBT91000000009', 'SUCCESSFUL'), transactionAmount: EMAIL.rejected },
      ]),
    ),
  );
  expect(json2.rowsUpdated).toBe(1);
  expect(json2.rowsRejected).toBe(1);
  // Report CSV with columns the parser does not know.
  await loadReport(
    h,
    report('report-csv', 'report.csv'),
    text(`${CSV_HEADER}\n${csvLine('IBT91000000002')}\n`),
  );
  // A CSV report without its header: the first data line is taken for the header and refused.
  const headerError = await refused(
    loadReport(
      h,
      report('report-csv', 'headerless.csv'),
      text(`${csvLine('IBT91000000003').replace(EMAIL.csv, EMAIL.header)}\n`),
    ),
  );
  expect(headerError).toMatch(/header lacks required column/);

  // Ledger: CSV and NDJSON with members the ledger does not know; a bad line; a headerless file.
  await loadLedger(
    h,
    { fileName: 'ledger.csv', origin: 'file', environment: 'staging' },
    text(
      `merchant_transaction_id,transaction_type,amount_cents,currency,status,booked_at,consumer_email,bank_account\n` +
        `ORD-ET9100000001,DEBIT,12550,CAD,SUCCESSFUL,2026-03-10T15:00:00Z,${EMAIL.ledger},${ACCOUNT}\n` +
        `ORD-BAD1,DEBIT,100,${EMAIL.ledger},SUCCESSFUL,2026-03-10T15:00:00Z,${EMAIL.ledger},${ACCOUNT}\n`,
    ),
  );
  await loadLedger(
    h,
    { fileName: 'ledger.ndjson', origin: 'file', environment: 'staging' },
    text(
      `${JSON.stringify({ merchant_transaction_id: 'ORD-IBT91000000001', transaction_type: 'DEBIT', amount_cents: 12550, currency: 'CAD', status: 'SUCCESSFUL', booked_at: '2026-03-10T15:00:00Z', consumerEmail: EMAIL.ledger, accountToken: TOKEN })}\n` +
        `{"merchant_transaction_id": "ORD-BAD2", "email": "${EMAIL.ledger}", \n`,
    ),
  );
  await refused(
    loadLedger(
      h,
      { fileName: 'ledger-headerless.csv', origin: 'file', environment: 'staging' },
      text(`ORD-X,DEBIT,100,CAD,SUCCESSFUL,2026-03-10T15:00:00Z,${EMAIL.ledger},${ACCOUNT}\n`),
    ),
  );

  // Notifications: the receiver (stored, refused as not JSON, refused by validation) and an import.
  expect(await post(JSON.stringify(notification('ET9100000001', TOKEN)))).toBe(200);
  expect(await post(`${EMAIL.notified} ${TOKEN} ${LABEL}`)).toBe(400);
  expect(
    await post(
      `{"accountInfo": {"accountToken": "${TOKEN}", "accountLabel": "${LABEL}"}, "x": ${EMAIL.notified}}`,
    ),
  ).toBe(400);
  const invalid = notification('ET9100000005', TOKEN);
  expect(
    await post(
      JSON.stringify({
        ...invalid,
        merchant: { ...invalid.merchant, merchantUserId: EMAIL.notified, merchantId: 42 },
      }),
    ),
  ).toBe(400);
  const imported = await importNotificationHistory(
    h.db,
    text(
      `${JSON.stringify({ kind: 'transaction', received_at: '2026-03-10T15:00:05Z', payload: notification('IBT91000000001', TOKEN_IMPORTED) })}\n` +
        `${EMAIL.imported} ${TOKEN_IMPORTED}\n` +
        `${JSON.stringify({ kind: EMAIL.imported, payload: notification('IBT91000000002', TOKEN_IMPORTED) })}\n`,
    ),
    { fileName: 'history.ndjson' },
  );
  expect(imported).toMatchObject({ stored: 1, quarantined: 2 });

  // Status lookups: the answer carries the masked account and the token (the token is stripped).
  const followUpPendingTransactions = (db: typeof h.db, req: { now: string; lookupStatus: LookupStatus }) =>
    followUpNonFinal(db, {
      ...req,
      account: 'default',
      environment: 'staging',
      origin: 'pull',
      day: req.now.slice(0, 10),
      before: req.now.slice(0, 10),
      horizonDays: 120,
      limit: 200,
      pendingForHours: 24,
    });
  await followUpPendingTransactions(h.db, {
    now: '2026-03-20T00:00:00Z',
    lookupStatus: async (id) => {
      if (id === 'never') throw new Error(`lookup of ${EMAIL.json} failed`);
      return {
        transaction: { transactionId: id, transactionStatus: 'SUCCESS', transactionFee: 125 },
        account: { accountMask: LABEL, obvToken: TOKEN, bankName: 'Maple Bank', accountType: 'PC' },
      };
    },
  });
  await sql`insert into provider_transactions (transaction_id, raw_transaction_type, raw_status, status, amount_cents, currency, transaction_on, transaction_at, source, load_id, first_load_id, raw)
    select 'never', 'DEBIT', 'PENDING', 'PENDING', 100, 'CAD', '2026-03-10', '2026-03-10T15:00:00Z', 'report-transactions', load_id, load_id, '{}'
    from loads order by load_id limit 1`.execute(h.db);
  await followUpPendingTransactions(h.db, {
    now: '2026-03-21T00:00:00Z',
    lookupStatus: async () => {
      throw new Error(`lookup failed: ${EMAIL.json} ${ACCOUNT}`);
    },
  });

  await reconcileRange(h.db, { from: '2026-03-09', to: '2026-03-11', now: '2026-03-25T00:00:00Z' });
});

afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

interface Relation {
  schema: string;
  name: string;
  kind: string;
  column: string;
  comment: string | null;
  pipeline_only: boolean;
  readable: boolean;
}

/** Every column of every table and view outside the system schemas, and whether the analyst reads it. */
async function relations(): Promise<Relation[]> {
  const r = await sql<Relation>`
    select n.nspname as schema, c.relname as name, c.relkind::text as kind, a.attname as column,
           col_description(c.oid, a.attnum) as comment,
           coalesce(obj_description(c.oid, 'pg_class'), '') like '[pipeline only]%' as pipeline_only,
           has_schema_privilege('recon_analyst', n.oid, 'USAGE')
             and has_column_privilege('recon_analyst', c.oid, a.attnum, 'SELECT') as readable
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where c.relkind in ('r', 'v', 'm', 'p', 'f')
      and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
    order by 1, 2, a.attnum`.execute(h.db);
  return r.rows;
}

/** Runs `fn` on one connection as recon_analyst. */
function asAnalyst<T>(fn: (conn: Kysely<Database>) => Promise<T>): Promise<T> {
  return h.db.connection().execute(async (conn) => {
    await sql`set role recon_analyst`.execute(conn);
    try {
      return await fn(conn);
    } finally {
      await sql`reset role`.execute(conn);
    }
  });
}

const hitsQuery = (schema: string, name: string, column: string) =>
  sql<{ hits: number }>`select count(*)::int as hits from ${sql.table(`${schema}.${name}`)} t
    where exists (select from unnest(${NEEDLES}::text[]) needle
                  where strpos(lower(t.${sql.ref(column)}::text), lower(needle)) > 0)`;

describe("consumers' personal data and recon_analyst", () => {
  it('marks personal columns in their COMMENT, and the analyst reads exactly the unmarked ones', async () => {
    const rows = (await relations()).filter(
      (r) => r.schema === 'public' && r.kind === 'r' && !r.name.startsWith('kysely_'),
    );
    const personal = rows.filter((r) => (r.comment ?? '').startsWith(PERSONAL_MARK));
    expect(personal.map((r) => `${r.name}.${r.column}`).sort()).toEqual(
      expect.arrayContaining([
        'legacy_transactions.bank_account_masked',
        'legacy_transactions.consumer_email',
        'legacy_transactions.raw',
        'notification_quarantine.body',
        'notifications.account_label',
        'notifications.account_token',
        'notifications.payload',
        'provider_adjustments.raw',
        'provider_returns.raw',
        'provider_transactions.raw',
        'rejected_rows.raw',
        'row_history.previous',
        'status_lookups.response',
      ]),
    );
    expect(personal.filter((r) => r.readable)).toEqual([]);
    // Credentials of the workbench (users, tokens, sessions) and proposed settings are no one's personal data but the
    // pipeline's own: their tables say so, and the analyst reads none of their columns.
    const pipelineOnly = rows.filter((r) => r.pipeline_only);
    expect(new Set(pipelineOnly.map((r) => r.name))).toEqual(
      new Set([
        'workbench_users',
        'workbench_tokens',
        'workbench_sessions',
        'workbench_sign_in_throttle',
        // Proposed settings name several accounts at once: no login limited to some may read them.
        'reconcile_settings',
      ]),
    );
    expect(pipelineOnly.filter((r) => r.readable)).toEqual([]);
    expect(
      rows.filter((r) => !r.readable && !r.pipeline_only && !(r.comment ?? '').startsWith(PERSONAL_MARK)),
    ).toEqual([]);
  });

  it('planted every value where the pipeline can see it', async () => {
    const found = new Set<string>();
    for (const r of await relations()) {
      if (r.kind !== 'r' || r.schema !== 'public') continue;
      const q = await sql<{
        v: string;
      }>`select ${sql.ref(r.column)}::text as v from ${sql.table(r.name)}`.execute(h.db);
      for (const { v } of q.rows) for (const n of NEEDLES) if (v?.includes(n)) found.add(n);
    }
    // The headerless file was refused whole: its e-mail is only ever in the error (checked below).
    expect([...found].sort()).toEqual(NEEDLES.filter((n) => n !== EMAIL.header).sort());
  });

  it('finds none of it in any column of any table or view the analyst can select', async () => {
    const readable = (await relations()).filter((r) => r.readable);
    expect(readable.length).toBeGreaterThan(300);
    const hits = await asAnalyst(async (conn) => {
      const out: string[] = [];
      for (const r of readable) {
        const q = await hitsQuery(r.schema, r.name, r.column).execute(conn);
        if (q.rows[0]!.hits > 0) out.push(`${r.schema}.${r.name}.${r.column}: ${q.rows[0]!.hits}`);
      }
      return out;
    });
    expect(hits).toEqual([]);
  });

  it('never echoes personal data in errors, refusals or logs', () => {
    const leaks = [...errors, ...logs].filter((m) => NEEDLES.some((n) => m.includes(n)));
    expect(leaks).toEqual([]);
    expect(errors.length).toBeGreaterThan(5);
  });

  it('gives analysts redacted raw lines and keyed hashes they can join and count', async () => {
    const view = await asAnalyst(async (conn) => {
      const legacyRows = await sql<{
        transaction_id: string;
        consumer_email_hash: string;
        bank_account_hash: string;
        raw_redacted: string;
      }>`
        select transaction_id, consumer_email_hash, bank_account_hash, raw_redacted from legacy_transactions_redacted order by transaction_id`.execute(
        conn,
      );
      const tokens = await sql<{ account_token_hash: string; n: number }>`
        select account_token_hash, count(*)::int as n from notifications_redacted group by 1 order by 2 desc`.execute(
        conn,
      );
      const history = await sql<{ previous_redacted: Record<string, unknown> }>`
        select previous_redacted from row_history_redacted where table_name = 'legacy_transactions'`.execute(
        conn,
      );
      return { legacyRows: legacyRows.rows, tokens: tokens.rows, history: history.rows };
    });
    expect(view.legacyRows.map((r) => r.transaction_id)).toEqual([
      'ET9100000001',
      'ET9100000002',
      'ET9100000003',
    ]);
    const [a, b, c] = view.legacyRows;
    expect(a!.consumer_email_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(a!.bank_account_hash).toBe(c!.bank_account_hash);
    expect(a!.consumer_email_hash).not.toBe(b!.consumer_email_hash);
    expect(a!.raw_redacted).toBe(
      `20260310,D,ORD-ET9100000001,ET9100000001,0000012550,CAD,S,IU1,0000000125,MERCH001,,C,player-1,101500,CA,${PERSONAL_MARK},${PERSONAL_MARK}`,
    );
    expect(view.tokens.map((t) => t.n)).toEqual([1, 1]);
    expect(view.history).toHaveLength(1);
    expect(view.history[0]!.previous_redacted).toMatchObject({
      consumer_email: PERSONAL_MARK,
      bank_account_masked: PERSONAL_MARK,
      raw_status: 'S',
      fee_cents: 125,
    });
    // The hash is keyed: a plain sha256 of the e-mail is not it.
    const plain = await sql<{
      h: string;
    }>`select encode(sha256(convert_to(${EMAIL.legacy5}, 'UTF8')), 'hex') as h`.execute(h.db);
    expect(a!.consumer_email_hash).not.toBe(plain.rows[0]!.h);
  });

  it('redacts in SQL (views, retention) exactly as in messages (domain/privacy.ts)', async () => {
    const samples = [
      `20260310,D,ORD-1,ET1,0000012550,CAD,S,IU1,0000000125,MERCH001,,C,player-1,101500,CA,${EMAIL.legacy5},${ACCOUNT}`,
      JSON.stringify(jsonRecord('T1', 'PENDING')),
      JSON.stringify(notification('T2', TOKEN)),
      `${CSV_HEADER}\n${csvLine('T3')}`,
      'XXX-XXXXX-XXXXXXX1234 ****0099 {"Account_Token" : "a\\"b", "email":null}',
    ];
    const r = await sql<{
      v: string;
    }>`select redact_personal(s) as v from unnest(${samples}::text[]) with ordinality u(s, i) order by i`.execute(
      h.db,
    );
    expect(r.rows.map((x) => x.v)).toEqual(samples.map(redactPersonal));
  });
});
