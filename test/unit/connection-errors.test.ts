import { describe, expect, it } from 'vitest';
import { databaseAddress, databaseErrorLine } from '../../db/connection-errors.ts';

describe('database connection errors', () => {
  it('name the server as host:port/database, never the user or password', () => {
    expect(databaseAddress('postgres://recon:s3cret@db.internal:6543/warehouse?sslmode=require')).toBe(
      'db.internal:6543/warehouse',
    );
    expect(databaseAddress('postgres://recon:s3cret@db.internal/warehouse')).toBe(
      'db.internal:5432/warehouse',
    );
    expect(databaseAddress('not a url s3cret')).toBe('the configured DATABASE_URL');
  });

  it('become one line for refused, cut and crashed connections, and nothing for other errors', () => {
    const url = 'postgres://recon:s3cret@127.0.0.1:5999/recon';
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5999'), { code: 'ECONNREFUSED' });
    expect(databaseErrorLine(refused, url)).toBe(
      'cannot reach the database at 127.0.0.1:5999/recon (connection refused): check that PostgreSQL is running there and that DATABASE_URL names the right host and port',
    );
    expect(databaseErrorLine(new Error('Connection terminated unexpectedly'), url)).toBe(
      'lost the connection to the database at 127.0.0.1:5999/recon (the server closed the connection); nothing partial was kept: check that PostgreSQL is running, then re-run the command',
    );
    const crashed = Object.assign(
      new Error('terminating connection because of crash of another server process'),
      {
        code: '57P02',
      },
    );
    expect(databaseErrorLine(crashed, url)).toMatch(/^lost the connection .* \(the server crashed\);/);
    const wrapped = new Error('load failed', { cause: refused });
    expect(databaseErrorLine(wrapped, url)).toMatch(/^cannot reach the database at 127\.0\.0\.1:5999\/recon/);
    expect(
      databaseErrorLine(Object.assign(new Error('duplicate key'), { code: '23505' }), url),
    ).toBeUndefined();
    expect(databaseErrorLine(new RangeError('reconcile range'), url)).toBeUndefined();
    for (const e of [refused, crashed]) expect(databaseErrorLine(e, url)).not.toContain('s3cret');
  });
});
