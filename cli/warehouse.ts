import { type Command, Option } from 'commander';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../domain/errors.ts';
import { runCommand } from './run.ts';

function embeddedOnly(config: Config, what: string): void {
  if (config.databaseUrl !== undefined) {
    throw new ConfigError(
      `DATABASE_URL is set: recon warehouse ${what} manages only the embedded PostgreSQL in RECON_DATA_DIR (${config.dataDir}); unset DATABASE_URL to use it`,
    );
  }
}

/** `recon warehouse start`: the warehouse migrated and kept running, with the analyst login ready. */
async function startWarehouse(config: Config): Promise<void> {
  embeddedOnly(config, 'start');
  const { acquireWarehouse, analystUrl } = await import('../db/embedded-warehouse.ts');
  const { readyForAnalysts } = await import('./warehouse-psql.ts');
  const lease = await acquireWarehouse(config.dataDir, { session: true });
  const paths = await readyForAnalysts(config, lease);
  process.stdout.write(
    `warehouse ${lease.started ? 'started' : 'running'}: pid ${lease.server.pid}, 127.0.0.1:${lease.server.port}, data ${paths.pgDir}\n` +
      `analyst (recon_analyst): ${analystUrl(paths, lease.server.port)}\n` +
      'recon warehouse psql opens a session; recon warehouse stop stops it\n',
  );
}

/** `recon warehouse stop`. */
async function stopWarehouseCommand(config: Config): Promise<void> {
  embeddedOnly(config, 'stop');
  const { stopWarehouse } = await import('../db/embedded-warehouse.ts');
  const pid = await stopWarehouse(config.dataDir, { mode: 'fast' });
  process.stdout.write(pid === undefined ? 'warehouse is not running\n' : `warehouse stopped (pid ${pid})\n`);
}

/** `recon warehouse status`: exit code 0 when it runs (or is external), 3 when it is stopped. */
async function printWarehouseStatus(config: Config): Promise<number> {
  if (config.databaseUrl !== undefined) {
    const { describeDatabase } = await import('../db/schema-state.ts');
    process.stdout.write(`warehouse: external, ${describeDatabase(config.databaseUrl)} (DATABASE_URL)\n`);
    return 0;
  }
  const { warehouseStatus } = await import('../db/embedded-warehouse.ts');
  const status = await warehouseStatus(config.dataDir);
  if (!status.running) {
    process.stdout.write(
      `warehouse stopped (data ${status.paths.pgDir}${status.initialised ? '' : ', not created yet'}): recon warehouse start\n`,
    );
    return 3;
  }
  const { server } = status;
  process.stdout.write(
    `warehouse running: pid ${server.pid}, 127.0.0.1:${server.port}, data ${status.paths.pgDir}, ` +
      `${status.clients} session(s); ` +
      (server.session
        ? 'started by `recon warehouse start`, runs until `recon warehouse stop`\n'
        : 'started by a command: stops when its last user is done (or `recon warehouse stop`)\n'),
  );
  return 0;
}

/** `recon warehouse url`: both connection strings, or the one `--role` names, bare. */
async function printWarehouseUrls(config: Config, role: string | undefined): Promise<void> {
  embeddedOnly(config, 'url');
  const { analystUrl, ensureAnalystLogin, findRunningWarehouse, warehousePaths } =
    await import('../db/embedded-warehouse.ts');
  const server = await findRunningWarehouse(config.dataDir);
  if (!server) {
    throw new Error(
      `the warehouse in ${warehousePaths(config.dataDir).pgDir} is not running: start it with \`recon warehouse start\``,
    );
  }
  const paths = warehousePaths(config.dataDir);
  await ensureAnalystLogin(paths, server.connectionString);
  const analyst = analystUrl(paths, server.port);
  if (role === 'pipeline') process.stdout.write(`${server.connectionString}\n`);
  else if (role === 'analyst') process.stdout.write(`${analyst}\n`);
  else process.stdout.write(`pipeline: ${server.connectionString}\nanalyst:  ${analyst}\n`);
}

/**
 * `recon warehouse start | stop | status | url | psql`: the embedded PostgreSQL as a server for an
 * analyst's session (db/embedded-warehouse.ts), beyond the length of one command.
 */
export function registerWarehouse(program: Command): void {
  const warehouse = program
    .command('warehouse')
    .description(
      'the embedded PostgreSQL (data in RECON_DATA_DIR, default .data) as a server for an analyst session: start, stop, status, url, psql',
    );

  warehouse
    .command('start')
    .description(
      'start the embedded warehouse (migrated) and keep it running until `recon warehouse stop`; prints the analyst connection string. Every recon command uses it meanwhile',
    )
    .action(() => runCommand(startWarehouse));

  warehouse
    .command('stop')
    .description('stop the embedded warehouse, whoever started it (connected sessions are closed)')
    .action(() => runCommand(stopWarehouseCommand));

  warehouse
    .command('status')
    .description(
      'whether the embedded warehouse runs, where, who started it and how many sessions it has; exit 3 when it is stopped',
    )
    .action(() => runCommand(printWarehouseStatus));

  warehouse
    .command('url')
    .description(
      'print the connection strings of the running warehouse: the pipeline (owner) and the analyst login (member of recon_analyst); they hold passwords',
    )
    .addOption(new Option('--role <role>', 'print only one bare URL').choices(['pipeline', 'analyst']))
    .action((opts: { role?: string }) => runCommand((config) => printWarehouseUrls(config, opts.role)));

  warehouse
    .command('psql')
    .description(
      'open psql on the warehouse as the analyst login (--pipeline: as the pipeline); starts the warehouse for the length of the session when it is not running. Arguments after -- go to psql',
    )
    .option('--pipeline', "connect as the pipeline's own role (reads personal data)")
    .argument('[psql-args...]', 'passed to psql, e.g. -- -c "select count(*) from open_discrepancies"')
    .action((args: string[], opts: { pipeline?: boolean }) =>
      runCommand(async (config) => {
        const { runPsql } = await import('./warehouse-psql.ts');
        return runPsql(config, { args, pipeline: opts.pipeline === true });
      }),
    );
}
