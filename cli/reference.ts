import type { Argument, Command, Option } from 'commander';
import { ENVIRONMENT_VARIABLES, type VariableGroup } from '../config/variables.ts';
import { explainKind } from '../reconcile/rules/rules-in-words.ts';
import { DISCREPANCY_KINDS } from '../reconcile/settings.ts';
import { EXAMPLES } from './examples.ts';

/**
 * The generated part of docs/reference.md: every command with its arguments and options, from
 * commander's own definitions (the same objects `--help` prints), and every environment variable,
 * from config/variables.ts. `npm run docs:reference` writes it between the two markers; the rest of
 * the page is written by hand.
 */

export const BEGIN_MARKER = '<!-- BEGIN GENERATED: npm run docs:reference -->';
export const END_MARKER = '<!-- END GENERATED -->';

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replaceAll('|', '\\|');
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

function usageOf(command: Command): string {
  const args = (command.registeredArguments as readonly Argument[]).map((a) => {
    const name = `${a.name()}${a.variadic ? '...' : ''}`;
    return a.required ? `<${name}>` : `[${name}]`;
  });
  const options = command.options.length > 0 ? ['[options]'] : [];
  const sub = command.commands.length > 0 ? ['<command>'] : [];
  return [commandPath(command), ...options, ...sub, ...args].join(' ');
}

function defaultOf(option: Option): string {
  const value: unknown = option.defaultValue;
  if (value === undefined || value === false) return '';
  return `\`${option.defaultValueDescription ?? JSON.stringify(value)}\``;
}

function optionsTable(command: Command): string[] {
  const options = (command.options as readonly Option[]).filter((o) => !o.hidden);
  if (options.length === 0) return [];
  const rows = options.map((o) => {
    const choices = o.argChoices ? ` (one of ${o.argChoices.map((c) => `\`${c}\``).join(', ')})` : '';
    return `| \`${cell(o.flags)}\` | ${cell(o.description)}${cell(choices)} | ${defaultOf(o)} |`;
  });
  return ['| option | what | default |', '| --- | --- | --- |', ...rows, ''];
}

function renderCommand(command: Command, level: number): string[] {
  const path = commandPath(command);
  const example = EXAMPLES[path];
  const lines = [
    `${'#'.repeat(level)} ${path}`,
    '',
    cell(command.description()),
    '',
    '```text',
    usageOf(command),
    '```',
    '',
    ...optionsTable(command),
    ...(example ? ['Example:', '', '```sh', example, '```', ''] : []),
  ];
  for (const sub of command.commands) {
    if (sub.name() !== 'help') lines.push(...renderCommand(sub, level + 1));
  }
  return lines;
}

const GROUP_TITLES: Record<VariableGroup, string> = {
  warehouse: 'Warehouse',
  temporal: 'Temporal',
  'provider account': 'Provider account (one account; several: `RECON_ACCOUNTS_FILE`)',
  'notification receiver': 'Notification receiver',
  'worker and schedule': 'Worker and nightly schedule',
  'workbench, metrics and alerts': 'Workbench, metrics and alerts',
  'analysts and retention': 'Analysts and retention',
  development: 'Development',
};

function renderVariables(): string[] {
  const lines = [
    '## Environment variables',
    '',
    'Read from the environment, or from a `.env` file in the working directory (variables already set',
    'win). Secrets are marked: they never appear in logs, errors, workflow histories or the database.',
    '',
    '| variable | what | unset |',
    '| --- | --- | --- |',
  ];
  for (const group of Object.keys(GROUP_TITLES) as VariableGroup[]) {
    const vars = ENVIRONMENT_VARIABLES.filter((v) => v.group === group);
    if (vars.length === 0) continue;
    lines.push(`| **${GROUP_TITLES[group]}** | | |`);
    for (const v of vars) {
      lines.push(`| \`${v.name}\` | ${cell(v.meaning)}${v.secret ? ' (secret)' : ''} | ${cell(v.default)} |`);
    }
  }
  return [...lines, ''];
}

/** The generated block, markers included (not yet formatted by prettier: see scripts/write-reference.ts). */
export function renderReference(program: Command): string {
  const commands = program.commands.filter((c) => c.name() !== 'help');
  return [
    BEGIN_MARKER,
    '',
    '## Commands',
    '',
    `\`${usageOf(program)}\`: ${cell(program.description())}.`,
    '',
    ...commands.flatMap((c) => renderCommand(c, 3)),
    ...renderVariables(),
    END_MARKER,
  ].join('\n');
}

export const KINDS_BEGIN_MARKER = '<!-- BEGIN GENERATED: the kinds, npm run docs:reference -->';

/**
 * The table of docs/finance.md that says, for every discrepancy kind, what it means and what to do:
 * the words the workbench and the report show (reconcile/rules/rules-in-words.ts), so they never differ.
 */
export function renderKindsTable(): string {
  return [
    KINDS_BEGIN_MARKER,
    '',
    '| kind | means | what to do |',
    '| --- | --- | --- |',
    ...DISCREPANCY_KINDS.map((kind) => {
      const { means, todo } = explainKind(kind);
      return `| \`${kind}\` | ${cell(means)} | ${cell(todo)} |`;
    }),
    '',
    END_MARKER,
  ].join('\n');
}

/** `page` with the generated block that starts with `begin` replaced by `block`. */
export function replaceGenerated(page: string, block: string, begin = BEGIN_MARKER): string {
  const start = page.indexOf(begin);
  const end = page.indexOf(END_MARKER, start);
  if (start < 0 || end < start) {
    throw new Error(`the page has no ${begin} ... ${END_MARKER} block`);
  }
  return page.slice(0, start) + block + page.slice(end + END_MARKER.length);
}
