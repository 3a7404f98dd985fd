import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../support/database.ts';

/**
 * docs/analysts.md promises that its SQL works as printed: each ```sql block runs here as
 * recon_analyst on a migrated warehouse (empty: what is checked is that every view, column and grant
 * the query names exists and is readable by analysts).
 */
const h = useTestDatabase(1);
const page = readFileSync(new URL('../../docs/analysts.md', import.meta.url), 'utf8');
const queries = [...page.matchAll(/```sql\n([^]*?)```/g)].map((m) => m[1] as string);

describe('the SQL of docs/analysts.md', () => {
  it('has example queries', () => {
    expect(queries.length).toBeGreaterThanOrEqual(4);
  });

  it('runs as recon_analyst, every query', async () => {
    const outcomes = await h.db.connection().execute(async (conn) => {
      await sql`set role recon_analyst`.execute(conn);
      const out: string[] = [];
      try {
        for (const q of queries) {
          try {
            await sql.raw(q).execute(conn);
            out.push('ok');
          } catch (error) {
            out.push(`${(error as Error).message}: ${q.split('\n')[0]}`);
          }
        }
      } finally {
        await sql`reset role`.execute(conn);
      }
      return out;
    });
    expect(outcomes).toEqual(queries.map(() => 'ok'));
  });
});
