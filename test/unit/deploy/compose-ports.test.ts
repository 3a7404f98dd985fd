import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { buildProgram } from '../../../cli/program.ts';

/**
 * Every port that docker-compose.yml publishes must reach a server: the service listens on that
 * container port, on an address other than the container's loopback (a server on 127.0.0.1 inside a
 * container is unreachable through a published port). What each image binds is stated below, for ours
 * read from the CLI itself; a service whose image is not known here fails the test until it is added.
 */
const root = new URL('../../../', import.meta.url);
interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string>;
  ports?: (string | number | { target: number; published?: string | number; host_ip?: string })[];
}
const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
};

interface Binding {
  /** '*' for every interface; 'container-ip' for the address of the container's network interface. */
  address: string;
  port: number;
}

function commandOf(service: Service): string[] {
  const command = service.command ?? [];
  return typeof command === 'string' ? command.split(/\s+/).filter(Boolean) : command.map(String);
}

function optionValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  return args.find((a) => a.startsWith(`${name}=`))?.slice(name.length + 1);
}

/** The `recon` subcommand that a service of our image runs, and the default of its --host option. */
function reconHostDefault(args: string[]): string | undefined {
  let command: Command = buildProgram();
  for (const word of args) {
    if (word.startsWith('-')) break;
    const sub = command.commands.find((c) => c.name() === word);
    if (!sub) break;
    command = sub;
  }
  return command.options.find((o) => o.long === '--host')?.defaultValue as string | undefined;
}

function bindingOf(name: string, service: Service): Binding {
  const env = service.environment ?? {};
  const args = commandOf(service);
  if (service.build !== undefined) {
    // Our image: ENTRYPOINT is `recon`, the command names the subcommand and its options.
    const host = optionValue(args, '--host') ?? reconHostDefault(args);
    if (host === undefined) throw new Error(`${name}: \`recon ${args.join(' ')}\` has no --host option`);
    if (env.PORT === undefined) throw new Error(`${name}: publishes a port but sets no PORT`);
    return { address: host, port: Number(env.PORT) };
  }
  const image = service.image ?? '';
  if (/^postgres:/.test(image)) {
    // The official image writes listen_addresses = '*' into postgresql.conf; a command could override it.
    if (args.some((a) => /listen_addresses|^-h$/.test(a))) {
      return { address: optionValue(args, '-h') ?? 'overridden', port: 5432 };
    }
    return { address: '*', port: Number(optionValue(args, '-p') ?? 5432) };
  }
  if (/^temporalio\/(auto-setup|server):/.test(image)) {
    // The entrypoint binds BIND_ON_IP, by default the container's own address.
    return {
      address: env.BIND_ON_IP ?? 'container-ip',
      port: Number(env.FRONTEND_GRPC_PORT ?? 7233),
    };
  }
  if (/^temporalio\/ui:/.test(image)) {
    // ui-server's config template sets only the port: it listens on every interface.
    return { address: '*', port: Number(env.TEMPORAL_UI_PORT ?? 8080) };
  }
  throw new Error(`${name}: publishes ports, but this test does not know what address ${image} binds`);
}

function targetPort(spec: NonNullable<Service['ports']>[number]): number {
  if (typeof spec === 'object') return Number(spec.target);
  // [HOST_IP:][HOST_PORT:]CONTAINER_PORT[/PROTOCOL]
  const parts = String(spec)
    .replace(/\/\w+$/, '')
    .split(':');
  return Number(parts[parts.length - 1]);
}

const LOOPBACK = /^(127\.|::1$|localhost$)/;

describe('docker-compose.yml published ports', () => {
  const published = Object.entries(compose.services).filter(([, s]) => (s.ports ?? []).length > 0);

  it('publishes the receiver, the databases, Temporal and its UI', () => {
    expect(published.map(([name]) => name).sort()).toEqual(
      expect.arrayContaining(['notifications', 'temporal', 'temporal-ui', 'warehouse-db']),
    );
  });

  it.each(published)(
    '%s listens on the published container port, on an address outside the container',
    (name, service) => {
      const binding = bindingOf(name, service);
      expect(binding.address, `${name} binds ${binding.address}`).not.toMatch(LOOPBACK);
      for (const spec of service.ports ?? []) {
        expect(targetPort(spec), `${name} publishes ${JSON.stringify(spec)}`).toBe(binding.port);
      }
    },
  );

  it('reads the receiver default from the CLI: on its own, `notifications serve` binds the loopback', () => {
    expect(reconHostDefault(['notifications', 'serve'])).toBe('127.0.0.1');
    expect(
      bindingOf('notifications', {
        build: '.',
        command: ['notifications', 'serve'],
        environment: { PORT: '8081' },
      }),
    ).toEqual({ address: '127.0.0.1', port: 8081 });
  });
});

describe('.gitignore', () => {
  const lines = readFileSync(new URL('.gitignore', root), 'utf8').split('\n');
  it('ignores every .env file (secrets: .env, .env.sandbox) except .env.example', () => {
    expect(lines).toContain('.env*');
    expect(lines).toContain('!.env.example');
    expect(lines.indexOf('!.env.example')).toBeGreaterThan(lines.indexOf('.env*'));
  });
});
