import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DISCREPANCY_KINDS } from '../../reconcile/settings.ts';
import { FINANCE_PATH, freshFinance } from '../../scripts/write-reference.ts';

/**
 * docs/finance.md tells the finance team, for every discrepancy kind, what it means and what to do,
 * in the words the workbench and the report show (reconcile/rules/rules-in-words.ts): its table is
 * generated from them, and this fails when the two drift apart.
 */
describe('docs/finance.md, what each kind means and what to do', () => {
  it('is what rules-in-words.ts says, for every kind (run `npm run docs:reference` when this fails)', async () => {
    const committed = readFileSync(FINANCE_PATH, 'utf8');
    for (const kind of DISCREPANCY_KINDS) expect(committed).toContain(`| \`${kind}\``);
    expect(committed).toBe(await freshFinance(committed));
  });
});
