import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The options of a bench section, from the command line (`node bench/x.ts ...`) or the environment. */

/** Whether the module at `moduleUrl` is the script node was started with, not a module bench/run.ts imports. */
export function runAsScript(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(moduleUrl);
}

/**
 * The numbers the command line gives for options, each named by its flag: `{ historyRows: 5 }` from
 * `--history-rows 5` for `{ historyRows: '--history-rows' }`. An option whose flag is absent is left out.
 */
export function numberFlags<K extends string>(
  flags: Readonly<Record<K, string>>,
): Partial<Record<K, number>> {
  const given: Partial<Record<K, number>> = {};
  for (const [option, flag] of Object.entries(flags) as [K, string][]) {
    const i = process.argv.indexOf(flag);
    if (i > 0) given[option] = Number(process.argv[i + 1]);
  }
  return given;
}

/**
 * The sizes of a section from the environment, each option named by its variable and the size it
 * takes when the variable is unset: `{ historyRows: ['BENCH_HISTORY_ROWS', 1_000_000] }`.
 */
export function environmentSizes<K extends string>(
  variables: Readonly<Record<K, readonly [variable: string, unset: number]>>,
): Record<K, number> {
  const sizes = {} as Record<K, number>;
  for (const [option, [variable, unset]] of Object.entries(variables) as [K, readonly [string, number]][]) {
    sizes[option] = Number(process.env[variable] ?? unset);
  }
  return sizes;
}
