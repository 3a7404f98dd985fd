import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import prettier from 'prettier';
import { buildProgram } from '../cli/program.ts';
import { renderReference, replaceGenerated } from '../cli/reference.ts';

/** Path of the committed reference. */
export const REFERENCE_PATH = resolve(fileURLToPath(import.meta.url), '../../docs/reference.md');

/**
 * docs/reference.md as it should be: the page with its generated block (commands and options from
 * commander, variables from config/variables.ts) rendered again, formatted as `npm run lint` wants.
 */
export async function freshReference(page = readFileSync(REFERENCE_PATH, 'utf8')): Promise<string> {
  const options = (await prettier.resolveConfig(REFERENCE_PATH)) ?? {};
  return prettier.format(replaceGenerated(page, renderReference(buildProgram())), {
    ...options,
    filepath: REFERENCE_PATH,
  });
}

/** `npm run docs:reference`: rewrites the generated block of docs/reference.md. */
async function main(): Promise<void> {
  writeFileSync(REFERENCE_PATH, await freshReference());
  process.stdout.write(`wrote ${REFERENCE_PATH}\n`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
