import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import { buildProgram } from '../cli/program.ts';
import { KINDS_BEGIN_MARKER, renderKindsTable, renderReference, replaceGenerated } from '../cli/reference.ts';

/** Path of the committed reference. */
export const REFERENCE_PATH = resolve(fileURLToPath(import.meta.url), '../../docs/reference.md');
/** The finance guide, whose table of kinds (what each means, what to do) is generated too. */
export const FINANCE_PATH = resolve(fileURLToPath(import.meta.url), '../../docs/finance.md');

async function formatted(path: string, page: string): Promise<string> {
  const options = (await prettier.resolveConfig(path)) ?? {};
  return prettier.format(page, { ...options, filepath: path });
}

/**
 * docs/reference.md as it should be: the page with its generated block (commands and options from
 * commander, variables from config/variables.ts) rendered again, formatted as `npm run lint` wants.
 */
export async function freshReference(page = readFileSync(REFERENCE_PATH, 'utf8')): Promise<string> {
  return formatted(REFERENCE_PATH, replaceGenerated(page, renderReference(buildProgram())));
}

/** docs/finance.md as it should be: its table of kinds rendered again from rules-in-words.ts. */
export async function freshFinance(page = readFileSync(FINANCE_PATH, 'utf8')): Promise<string> {
  return formatted(FINANCE_PATH, replaceGenerated(page, renderKindsTable(), KINDS_BEGIN_MARKER));
}

/** `npm run docs:reference`: rewrites the generated blocks of docs/reference.md and docs/finance.md. */
async function main(): Promise<void> {
  writeFileSync(REFERENCE_PATH, await freshReference());
  writeFileSync(FINANCE_PATH, await freshFinance());
  process.stdout.write(`wrote ${REFERENCE_PATH} and ${FINANCE_PATH}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
