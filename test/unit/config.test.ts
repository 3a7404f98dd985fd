import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { ConfigError } from '../../domain/errors.ts';

describe('loadConfig', () => {
  it('takes RECON_DB_TIMEOUT_SECONDS as whole seconds and leaves the default to the database layer when unset', () => {
    expect(loadConfig({ RECON_DB_TIMEOUT_SECONDS: '12' }).dbTimeoutSeconds).toBe(12);
    expect(loadConfig({}).dbTimeoutSeconds).toBeUndefined();
    expect(loadConfig({ RECON_DB_TIMEOUT_SECONDS: ' ' }).dbTimeoutSeconds).toBeUndefined();
  });

  it.each(['0', '-5', '1.5', 'ten', '86401'])(
    'refuses RECON_DB_TIMEOUT_SECONDS=%s with what to set',
    (raw) => {
      const attempt = () => loadConfig({ RECON_DB_TIMEOUT_SECONDS: raw });
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(
        `RECON_DB_TIMEOUT_SECONDS=${JSON.stringify(raw)} is not a number of seconds: set it to a whole number from 1 to 86400, or unset it`,
      );
    },
  );

  it('names the variable and the valid values for a malformed port or retention', () => {
    expect(() => loadConfig({ PORT: '70000' })).toThrow('PORT="70000" is not a TCP port');
    expect(() => loadConfig({ RECON_RAW_RETENTION_DAYS: 'x' })).toThrow(
      'RECON_RAW_RETENTION_DAYS="x" is not a number of days',
    );
  });

  it('takes RECON_WORKBENCH_READ_URL as a PostgreSQL connection string, unset by default', () => {
    const url = 'postgres://recon:s3cret@replica.internal:5432/recon';
    expect(loadConfig({ RECON_WORKBENCH_READ_URL: url }).workbenchReadUrl).toBe(url);
    expect(
      loadConfig({ RECON_WORKBENCH_READ_URL: 'postgresql:///recon?host=/run/pg' }).workbenchReadUrl,
    ).toBe('postgresql:///recon?host=/run/pg');
    expect(loadConfig({}).workbenchReadUrl).toBeUndefined();
    expect(loadConfig({ RECON_WORKBENCH_READ_URL: ' ' }).workbenchReadUrl).toBeUndefined();
  });

  it.each(['https://replica:s3cret@host/recon', 'replica:5432', 'mysql://u:s3cret@h/db'])(
    'refuses RECON_WORKBENCH_READ_URL=%s without echoing it',
    (raw) => {
      const attempt = () => loadConfig({ RECON_WORKBENCH_READ_URL: raw });
      expect(attempt).toThrow(
        'RECON_WORKBENCH_READ_URL is not a PostgreSQL connection string: set it to postgres://USER:PASSWORD@HOST:PORT/DATABASE, or unset it',
      );
      try {
        attempt();
      } catch (error) {
        expect(String((error as Error).message)).not.toContain(raw);
      }
    },
  );
});
