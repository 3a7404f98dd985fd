import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.ts';
import { PERSONAL_MARK } from '../../domain/privacy.ts';

/** Whether a column's COMMENT marks it as personal data (the grants of recon_analyst follow the mark). */
export function isPersonalComment(comment: string | null): boolean {
  return (comment ?? '').startsWith(PERSONAL_MARK);
}

interface ColumnRow {
  relname: string;
  relkind: string;
  table_comment: string | null;
  column_name: string;
  data_type: string;
  not_null: boolean;
  column_comment: string | null;
}

function cell(text: string | null): string {
  return (text ?? '').replaceAll('|', '\\|').replaceAll('\n', ' ');
}

/**
 * The data dictionary as Markdown, generated from the COMMENT ON of every table, view and column of
 * the public schema (migrations are the single source). Deterministic: tables and views by name,
 * columns in their order. docs/data-dictionary.md is this output; a test fails when it is stale.
 */
export async function renderDataDictionary(db: Kysely<Database>): Promise<string> {
  const rows = await sql<ColumnRow>`
    select c.relname, c.relkind::text as relkind, obj_description(c.oid, 'pg_class') as table_comment,
      a.attname as column_name, format_type(a.atttypid, a.atttypmod) as data_type, a.attnotnull as not_null,
      col_description(c.oid, a.attnum) as column_comment
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = 'public' and c.relkind in ('r', 'v', 'p') and c.relname not like 'kysely_%'
    order by c.relkind = 'v', c.relname, a.attnum`.execute(db);
  const out: string[] = [
    '# Data dictionary',
    '',
    '<!-- Generated from the database comments by `npm run docs:dictionary`; do not edit by hand. -->',
    '',
    'Every table and view of the warehouse, from the `COMMENT ON` statements of the migrations. Money is',
    'integer cents (`bigint`), instants are UTC `timestamptz`, business dates are Eastern (America/Toronto).',
    `The read-only role \`recon_analyst\` reads all of it except the columns whose meaning starts with \`${PERSONAL_MARK}\`:`,
    "consumers' personal data, for the pipeline's role only. Analysts read the `*_redacted` views instead.",
    '',
  ];
  const names = [...new Set(rows.rows.map((r) => r.relname))];
  const tables = names.filter((n) => rows.rows.find((r) => r.relname === n)!.relkind !== 'v');
  const views = names.filter((n) => !tables.includes(n));
  out.push('## Contents', '', `Tables: ${tables.map((t) => `[${t}](#${t})`).join(', ')}.`, '');
  out.push(`Views: ${views.map((t) => `[${t}](#${t})`).join(', ')}.`, '');
  for (const name of names) {
    const cols = rows.rows.filter((r) => r.relname === name);
    const first = cols[0]!;
    out.push(
      `## ${name}`,
      '',
      `${first.relkind === 'v' ? 'View' : 'Table'}. ${cell(first.table_comment)}`,
      '',
    );
    out.push('| column | type | null | meaning |', '|---|---|---|---|');
    for (const c of cols) {
      const flag = isPersonalComment(c.column_comment)
        ? ' **Not readable by recon_analyst** (see the `_redacted` views).'
        : '';
      out.push(
        `| \`${c.column_name}\` | ${cell(c.data_type)} | ${c.not_null ? 'no' : 'yes'} | ${cell(c.column_comment)}${flag} |`,
      );
    }
    out.push('');
  }
  return out.join('\n');
}
