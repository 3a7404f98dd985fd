import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config/config.ts';
import { metricsSettings } from '../../config/metrics.ts';
import { checkTlsVerification, temporalBinaryPaths } from '../../config/process-environment.ts';
import { loadNightlySettings } from '../../config/schedule.ts';
import { loadWorkerSettings } from '../../config/worker.ts';
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

describe('settings read in config/ (issue 27, section 5)', () => {
  it('takes RECON_NOTIFICATION_ALLOW as a checked address list and RECON_ANALYST_PASSWORD as it is', () => {
    const config = loadConfig({
      RECON_NOTIFICATION_ALLOW: '10.0.0.0/8, ::1',
      RECON_ANALYST_PASSWORD: 'ana-secret-1',
    });
    expect(config.notificationAllow).toEqual(['10.0.0.0/8', '::1']);
    expect(config.analystPassword).toBe('ana-secret-1');
    expect(loadConfig({}).notificationAllow).toBeUndefined();
    const attempt = () => loadConfig({ RECON_NOTIFICATION_ALLOW: '10.0.0.0/33' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      'RECON_NOTIFICATION_ALLOW holds "10.0.0.0/33", which is not an IP address or CIDR range: list the addresses that may call the notification receiver',
    );
  });

  it("reads the nightly schedule's defaults, and refuses a malformed one saying what to set", () => {
    expect(loadNightlySettings({})).toEqual({ at: '02:30', lookbackDays: 3 });
    expect(loadNightlySettings({ RECON_NIGHTLY_AT: '23:05', RECON_NIGHTLY_LOOKBACK_DAYS: '0' })).toEqual({
      at: '23:05',
      lookbackDays: 0,
    });
    for (const [env, message] of [
      [{ RECON_NIGHTLY_AT: '24:00' }, 'RECON_NIGHTLY_AT="24:00" is not a time: set it to HH:MM'],
      [{ RECON_NIGHTLY_LOOKBACK_DAYS: '-1' }, 'RECON_NIGHTLY_LOOKBACK_DAYS="-1" is not a number of days'],
    ] as const) {
      const attempt = () => loadNightlySettings(env);
      expect(attempt).toThrow(ConfigError);
      expect(attempt).toThrow(message);
    }
    expect(new ConfigError('x').retryable).toBe(false);
  });

  it('reads the worker, metrics, Temporal binaries and TLS switch from the environment it is given', () => {
    const worker = loadWorkerSettings({ RECON_WORKER_ACTIVITY_SLOTS: '3', RECON_METRICS_PORT: '0' });
    expect(worker.maxConcurrentActivityTaskExecutions).toBe(3);
    expect(worker.metrics).toEqual({ host: '127.0.0.1', port: 0 });
    expect(metricsSettings({})).toBeUndefined();
    expect(temporalBinaryPaths({ TEMPORAL_CLI_PATH: '/opt/temporal' })).toEqual({
      cli: '/opt/temporal',
      testServer: undefined,
    });
    expect(() => checkTlsVerification({ NODE_TLS_REJECT_UNAUTHORIZED: '0' })).toThrow(ConfigError);
    expect(() => checkTlsVerification({})).not.toThrow();
  });
});
