import type { Command } from 'commander';
import { wholeNumberArg } from './options.ts';
import { runCommand } from './run.ts';

interface ServeOptions {
  port?: number;
  host: string;
  trustedUserHeader?: string;
  trustProxy?: boolean;
  sessionIdleMinutes: number;
  tlsCert?: string;
  tlsKey?: string;
}

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description(
      'the finance workbench: web pages and JSON API over the warehouse (worklist, evidence, actions, runs, coverage); Prometheus GET /metrics for a viewer, and without sign-in on RECON_METRICS_PORT (RECON_METRICS_HOST) when it is set',
    )
    .option('--port <port>', 'TCP port (default: PORT, else 8080)', wholeNumberArg(0, 65535))
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option(
      '--trusted-user-header <name>',
      "header set by the company's SSO proxy naming the signed-in user (e.g. X-Forwarded-User); believed only from RECON_WORKBENCH_TRUSTED_PROXIES, which it needs; off by default",
    )
    .option(
      '--trust-proxy',
      'trust X-Forwarded-Proto/-For from the proxies of RECON_WORKBENCH_TRUSTED_PROXIES (which it needs; setting that is enough)',
    )
    .option(
      '--session-idle-minutes <n>',
      'a session unused this long expires',
      wholeNumberArg(1, 24 * 60),
      30,
    )
    .option('--tls-cert <file>', 'serve HTTPS with this certificate (PEM), with --tls-key')
    .option('--tls-key <file>', 'private key (PEM) of --tls-cert')
    .action((opts: ServeOptions) =>
      runCommand(async (config) => {
        const { readFileSync } = await import('node:fs');
        const { startWorkbench } = await import('../workbench/start.ts');
        const { ConfigError } = await import('../domain/errors.ts');
        if ((opts.tlsCert === undefined) !== (opts.tlsKey === undefined))
          throw new ConfigError(
            '--tls-cert and --tls-key go together: give both or neither; see recon serve --help',
          );
        const proxies = config.workbenchTrustedProxies ?? [];
        if (opts.trustProxy && proxies.length === 0)
          throw new ConfigError(
            '--trust-proxy needs RECON_WORKBENCH_TRUSTED_PROXIES, the addresses of the proxies to trust: X-Forwarded-For from anyone else would let a client choose the address sign-in throttles',
          );
        const { metricsSettings } = await import('../config/metrics.ts');
        const metricsAt = metricsSettings();
        const running = await startWorkbench(config, {
          ...(metricsAt ? { metricsAt } : {}),
          port: opts.port ?? config.port ?? 8080,
          host: opts.host,
          sessions: { idleSeconds: opts.sessionIdleMinutes * 60 },
          // A preview of tolerances matches as the nightly runs do.
          reconcileSettings: { stuckPendingBusinessDays: config.followUp.stuckPendingDays },
          ...(opts.trustedUserHeader ? { trustedUserHeader: opts.trustedUserHeader } : {}),
          ...(proxies.length > 0 ? { trustedProxies: proxies } : {}),
          ...(opts.tlsCert && opts.tlsKey
            ? { https: { cert: readFileSync(opts.tlsCert), key: readFileSync(opts.tlsKey) } }
            : {}),
        });
        process.stdout.write(`workbench listening on ${running.url} (Ctrl-C stops it)\n`);
        if (running.metricsUrl) process.stdout.write(`metrics at ${running.metricsUrl}\n`);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await running.close();
      }),
    );
}
