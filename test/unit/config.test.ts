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
});
