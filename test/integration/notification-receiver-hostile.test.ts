import { sql } from 'kysely';
import { notificationBody } from '../support/notification-body.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { type NotificationReceiver, startNotificationReceiver } from '../../ingest/notifications/server.ts';
import { createTestDatabase } from '../support/database.ts';

/**
 * Every authenticated delivery is durable before it is answered: stored, or quarantined with its raw
 * bytes and the reason (4xx). The bodies here each used to get a 500 with nothing kept (NUL, lone
 * surrogate, deep nesting), or were accepted silently (a string amount, invalid UTF-8, text/plain).
 */
const SECRET = 'hostile-secret';
let h: DatabaseHandle;
let receiver: NotificationReceiver;

beforeAll(async () => {
  h = await createTestDatabase();
  receiver = await startNotificationReceiver({
    handle: h,
    config: { notificationSecret: SECRET },
    port: 0,
  });
});
afterAll(async () => {
  await receiver.close();
  await h.close();
});

function body(
  transactionId: string,
  merchant: Record<string, unknown> = {},
  transaction: Record<string, unknown> = {},
) {
  return notificationBody(transactionId, { merchant, transaction });
}

async function post(raw: string | Uint8Array, contentType = 'application/json', auth = `Bearer ${SECRET}`) {
  const res = await fetch(`${receiver.url}/notifications/transaction`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': contentType },
    body: raw,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function quarantined(raw: Buffer) {
  return h.db
    .selectFrom('notification_quarantine')
    .select(['kind', 'reason', 'body', 'raw_body', 'content_type', 'delivery_count'])
    .where('raw_body', '=', raw)
    .execute();
}

async function notificationsFor(transactionId: string) {
  return h.db
    .selectFrom('notifications')
    .select('notification_id')
    .where('transaction_id', '=', transactionId)
    .execute();
}

/** Posts the body twice (a provider retry); both answers are `status`; one quarantine row counted twice. */
async function expectQuarantinedOnce(raw: Buffer, status: number, reason: RegExp, contentType?: string) {
  const first = await post(raw, contentType);
  expect(first.status).toBe(status);
  expect(String(first.body.reason)).toMatch(reason);
  const retry = await post(raw, contentType);
  expect(retry.status).toBe(status);
  const rows = await quarantined(raw);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.kind).toBe('transaction');
  expect(rows[0]!.reason).toMatch(reason);
  expect(Buffer.compare(rows[0]!.raw_body, raw)).toBe(0);
  expect(rows[0]!.delivery_count).toBe(2);
  return rows[0]!;
}

describe('the receiver keeps every delivery', () => {
  it('quarantines a merchantTransactionId with a NUL (\\u0000), instead of a 500 with nothing kept', async () => {
    const raw = Buffer.from(JSON.stringify(body('NUL-1', { merchantTransactionId: 'M-\u0000-1' })));
    expect(raw.toString()).toContain('\\u0000');
    const row = await expectQuarantinedOnce(raw, 400, /merchantTransactionId contains a NUL/);
    expect(row.body).toBe(raw.toString());
    expect(await notificationsFor('NUL-1')).toEqual([]);
  });

  it('quarantines a lone surrogate in any string or key', async () => {
    const inValue = Buffer.from(
      JSON.stringify(body('SUR-1')).replace('"Maple Bank"', '"Maple \\ud800 Bank"'),
    );
    await expectQuarantinedOnce(inValue, 400, /accountInfo\.fiName contains a lone UTF-16 surrogate/);
    const inKey = Buffer.from(JSON.stringify(body('SUR-2')).replace('"fiName"', '"fi\\udc00Name"'));
    await expectQuarantinedOnce(inKey, 400, /a key of \$\.accountInfo contains a lone UTF-16 surrogate/);
    expect(await notificationsFor('SUR-1')).toEqual([]);
  });

  it('quarantines an array nested 5,000 deep in under 64 KiB', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const raw = Buffer.from(JSON.stringify(body('DEEP-1')).replace(/}$/, `,"extra":${deep}}`));
    expect(raw.length).toBeLessThan(64 * 1024);
    await expectQuarantinedOnce(raw, 400, /nested deeper than 32 levels/);
    expect(await notificationsFor('DEEP-1')).toEqual([]);
  });

  it('refuses an amount sent as the string "2015" (the spec types it as an integer)', async () => {
    const raw = Buffer.from(JSON.stringify(body('STR-1', {}, { transactionAmount: '2015' })));
    await expectQuarantinedOnce(
      raw,
      400,
      /transaction\.transactionAmount must be a JSON integer, got the string "2015"/,
    );
    expect(await notificationsFor('STR-1')).toEqual([]);
  });

  it('keeps invalid UTF-8 byte for byte (no silent U+FFFD)', async () => {
    const text = JSON.stringify(body('UTF-1'));
    const at = text.indexOf('Maple');
    const raw = Buffer.concat([
      Buffer.from(text.slice(0, at)),
      Buffer.from([0xff, 0xfe, 0x00, 0xc3]),
      Buffer.from(text.slice(at)),
    ]);
    const row = await expectQuarantinedOnce(raw, 400, /not valid UTF-8/);
    // Not text PostgreSQL can hold: only the bytes are kept.
    expect(row.body).toBeNull();
    expect(await notificationsFor('UTF-1')).toEqual([]);
  });

  it('refuses text/plain with 415 and keeps the body', async () => {
    const raw = Buffer.from(JSON.stringify(body('TXT-1')));
    const row = await expectQuarantinedOnce(
      raw,
      415,
      /content-type "text\/plain" is not application\/json/,
      'text/plain',
    );
    expect(row.content_type).toBe('text/plain');
    expect(await notificationsFor('TXT-1')).toEqual([]);
    // application/json; charset=utf-8 and application/*+json are JSON.
    const ok = await post(JSON.stringify(body('TXT-2')), 'application/json; charset=UTF-8');
    expect(ok.status).toBe(200);
  });

  it('keeps the first bytes of a body over the limit and answers 413', async () => {
    const raw = Buffer.from(JSON.stringify({ ...body('BIG-1'), pad: 'x'.repeat(70 * 1024) }));
    const res = await post(raw);
    expect(res.status).toBe(413);
    const rows = await h.db
      .selectFrom('notification_quarantine')
      .select(['raw_body', 'reason'])
      .where('reason', 'like', 'body larger than%')
      .execute();
    expect(rows).toHaveLength(1);
    expect(Buffer.compare(rows[0]!.raw_body, raw.subarray(0, 64 * 1024))).toBe(0);
  });

  it('stores nothing for an unauthenticated caller', async () => {
    const raw = Buffer.from(JSON.stringify(body('NUL-2', { merchantTransactionId: 'M-\u0000-2' })));
    expect((await post(raw, 'application/json', 'Bearer wrong')).status).toBe(401);
    expect(await quarantined(raw)).toEqual([]);
  });

  it('answers concurrent identical deliveries once "stored", then "duplicate", counted on one row', async () => {
    const raw = JSON.stringify(body('SAME-1'));
    const answers = await Promise.all(Array.from({ length: 40 }, () => post(raw)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.body.status === 'stored')).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.notificationId)).size).toBe(1);
    const rows = await h.db
      .selectFrom('notifications')
      .select('delivery_count')
      .where('transaction_id', '=', 'SAME-1')
      .execute();
    expect(rows).toEqual([{ delivery_count: 40 }]);
  });

  it('tells alive from ready, and keeps the raw bytes from recon_analyst', async () => {
    expect((await fetch(`${receiver.url}/health`)).status).toBe(200);
    expect((await fetch(`${receiver.url}/health/live`)).status).toBe(200);
    expect((await fetch(`${receiver.url}/health/ready`)).status).toBe(200);
    const grants = await sql<{ column: string; readable: boolean; comment: string }>`
      select a.attname as column,
             has_column_privilege('recon_analyst', a.attrelid, a.attname, 'select') as readable,
             col_description(a.attrelid, a.attnum) as comment
      from pg_attribute a
      where a.attrelid = 'notification_quarantine'::regclass and a.attname in ('raw_body', 'body')
      order by 1`.execute(h.db);
    expect(grants.rows.map((r) => [r.column, r.readable])).toEqual([
      ['body', false],
      ['raw_body', false],
    ]);
    for (const r of grants.rows) expect(r.comment).toContain('[personal data]');
  });
});
