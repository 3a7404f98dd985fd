import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/connect.ts';
import { renderDataDictionary } from '../../db/dictionary/data-dictionary.ts';
import { DICTIONARY_PATH } from '../../scripts/write-data-dictionary.ts';
import { createTestDatabase } from '../support/database.ts';

let h: DatabaseHandle;
beforeAll(async () => {
  h = await createTestDatabase();
});
afterAll(async () => h.close());

describe('docs/data-dictionary.md', () => {
  it('is what the migrated database comments say (run `npm run docs:dictionary` when this fails)', async () => {
    const fresh = await renderDataDictionary(h.db);
    expect(fresh).toContain('## open_discrepancies');
    expect(readFileSync(DICTIONARY_PATH, 'utf8')).toBe(fresh);
  });
});
