import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { down, up } from '../fixtures/legacy-migrations/2026_11_23_000600_quarantine_raw_bytes.ts';
import { quarantineKey } from '../../ingest/notifications/store-notification.ts';
import { createTestDatabase } from '../support/database.ts';

/** The quarantine's raw bytes migration on a table that already holds rows, repeats included. */
let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

describe('migration 2026_11_23_000600', () => {
  it('keeps every older row, copies its text as bytes, and hashes the first of each repeat', async () => {
    await down(h.db);
    await sql`insert into notification_quarantine (kind, reason, body) values
      ('transaction', 'bad', '{"a":1}'), ('transaction', 'bad', '{"a":1}'), ('return', 'bad', 'é')`.execute(
      h.db,
    );
    await up(h.db);
    const rows = await sql<{
      kind: string;
      body: string;
      raw_body: Buffer;
      body_sha256: string | null;
      delivery_count: number;
    }>`
      select kind, body, raw_body, body_sha256, delivery_count from notification_quarantine order by quarantine_id`.execute(
      h.db,
    );
    expect(
      rows.rows.map((r) => [r.kind, r.raw_body.toString('utf8'), r.body_sha256, r.delivery_count]),
    ).toEqual([
      ['transaction', '{"a":1}', quarantineKey('transaction', Buffer.from('{"a":1}')), 1],
      ['transaction', '{"a":1}', null, 1],
      ['return', 'é', quarantineKey('return', Buffer.from('é')), 1],
    ]);
  });
});
