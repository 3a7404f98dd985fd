import { type Kysely, sql } from 'kysely';

// A migration is frozen in time: it imports no application code and declares everything it needs.

/**
 * Near-miss candidates and manual matches (issue 29, sections 1 and 2; docs/finance.md).
 *
 * `match_candidates`: for an open missing_in_ledger or missing_at_provider discrepancy, up to five
 * unmatched items of the other side (same account and currency, near in date), each with the checks
 * it passed and failed in words and a score for ordering only. Written by every reconcile run for the
 * discrepancies of its range (reconcile/candidates/).
 *
 * `manual_matches` and `manual_match_items`: provider transactions paired by hand with ledger entries
 * (1:1, 1:N, N:1), with who, when and a note, and their undo. Matching reads the active items
 * (reconcile/rules/manual-matches.ts): a paired item is matched for every later run. A statement
 * trigger notes each change in recon_work.data_changes (migration 0013), so that no run reuses a
 * matching made before the pairing.
 *
 * `discrepancy_events.event` gains `matched` and `match_undone`.
 *
 * `recon_id_distance(a, b, max)`: the edit distance of two ids, or max + 1 when it is greater. It is
 * fuzzystrmatch's levenshtein_less_equal where that extension can be created; otherwise (a warehouse
 * whose role may not create it) the same bounded distance in PL/pgSQL, slower but called only on the
 * few candidate pairs of a run.
 */

// The account name check in the form of migration 0012, which spares the regex for 'default'.
const NAME_CHECK = `account = 'default' or (length(account) <= 32 and account ~ '^[a-z0-9-]+$')`;
const VISIBLE = (col: string) => `public.account_visible(${col}, current_user)`;
const lit = (text: string) => `'${text.replaceAll("'", "''")}'`;
const ACCOUNT = (table: string) =>
  `text not null default 'default' constraint ${table}_account_name check (${NAME_CHECK})`;
const ACCOUNT_COMMENT =
  'Provider account of the row (see the account column of its table). A login limited to some accounts (recon analysts grant --accounts) sees only their rows.';

type Columns = readonly (readonly [string, string, string])[];

const MATCH_COLUMNS: Columns = [
  ['match_id', 'bigint generated always as identity primary key', 'The manual match.'],
  ['account', ACCOUNT('manual_matches'), ACCOUNT_COMMENT],
  ['currency', 'char(3) not null', 'The one currency of every item of the match.'],
  [
    'provider_amount_cents',
    'bigint not null',
    'The sum of the provider transactions’ amount_cents when they were matched.',
  ],
  [
    'ledger_amount_cents',
    'bigint not null',
    'The sum of the ledger entries’ amount_cents when they were matched.',
  ],
  [
    'difference_cents',
    'bigint not null',
    'ledger_amount_cents - provider_amount_cents: within the amount tolerance, or written off (written_off_cents).',
  ],
  [
    'written_off_cents',
    'bigint not null default 0',
    'The difference written off when the match was made (a write_offs row naming this match), 0 when none.',
  ],
  [
    'note',
    `text not null check (btrim(note) <> '')`,
    'Why the items belong together, as the person wrote it (required).',
  ],
  ['matched_by', 'text not null', 'Who made the match: a workbench user, a token or the CLI’s user.'],
  ['matched_at', 'timestamptz not null default now()', 'When the match was made (UTC).'],
  [
    'origin',
    `text not null check (origin in ('workbench','api','cli','import'))`,
    'Where it was made: the workbench page, the API, recon matches add, recon matches import.',
  ],
  ['undone_by', 'text', 'Who undid the match; null while it holds.'],
  ['undone_at', 'timestamptz', 'When the match was undone (UTC); null while it holds.'],
  ['undo_note', 'text', 'Why it was undone, as the person wrote it.'],
];

const ITEM_COLUMNS: Columns = [
  ['match_id', 'bigint not null references manual_matches on delete cascade', 'The manual match.'],
  ['account', ACCOUNT('manual_match_items'), ACCOUNT_COMMENT],
  [
    'side',
    `text not null check (side in ('provider','ledger'))`,
    'provider: a provider transaction (item_id is its transaction_id); ledger: a ledger entry (item_id is its merchant_transaction_id).',
  ],
  ['item_id', 'text not null', 'The provider transaction_id or the ledger merchant_transaction_id.'],
  ['amount_cents', 'bigint not null', 'The item’s amount_cents when it was matched.'],
  [
    'business_date',
    'date not null',
    'The item’s Eastern business date: the provider transaction_on, the ledger entry’s booking date.',
  ],
  [
    'undone_at',
    'timestamptz',
    'The match’s undone_at, copied so that an item can be in one active match only (a unique index).',
  ],
];

const CANDIDATE_COLUMNS: Columns = [
  [
    'discrepancy_id',
    'bigint not null references discrepancies on delete cascade',
    'The open missing_in_ledger or missing_at_provider discrepancy the candidate is for.',
  ],
  ['account', ACCOUNT('match_candidates'), ACCOUNT_COMMENT],
  [
    'business_date',
    'date not null',
    'The discrepancy’s business date: a run rewrites the candidates of the discrepancies of its dates.',
  ],
  ['rank', 'integer not null check (rank between 1 and 5)', 'Order among the candidates: 1 first.'],
  [
    'side',
    `text not null check (side in ('provider','ledger'))`,
    'The side the candidate is on (the other side of the discrepancy).',
  ],
  [
    'candidate_id',
    'text not null',
    'The candidate: a provider transaction_id (side provider) or a ledger merchant_transaction_id (side ledger).',
  ],
  ['candidate_discrepancy_id', 'bigint', 'The candidate’s own missing_* discrepancy, when it has one open.'],
  ['amount_cents', 'bigint not null', 'The candidate’s amount_cents (in the discrepancy’s currency).'],
  ['candidate_business_date', 'date not null', 'The candidate’s Eastern business date.'],
  [
    'merchant_transaction_id',
    'text',
    'The candidate’s merchant transaction id (for a provider transaction, the one it carries).',
  ],
  [
    'score',
    'integer not null',
    'For ordering only: the more and the weightier the checks passed, the higher. Not a probability.',
  ],
  [
    'checks',
    'jsonb not null',
    'Every check, passed or failed, in words: [{check, passed, detail}] for amount, business_date, merchant_user and id.',
  ],
  ['run_id', 'bigint not null', 'The reconcile run that found the candidate.'],
];

const EVENTS_BEFORE = `'opened','changed','acknowledged','resolved','reopened','assigned','commented','verified'`;

/** The bounded distance in PL/pgSQL, for a warehouse without fuzzystrmatch (exported for its test). */
export const PLPGSQL_DISTANCE = `
create function public.recon_id_distance(a text, b text, max_d integer) returns integer
language plpgsql immutable strict parallel safe as $f$
declare
  la integer := length(a); lb integer := length(b);
  prev integer[]; cur integer[]; i integer; j integer; best integer;
begin
  if abs(la - lb) > max_d then return max_d + 1; end if;
  prev := array(select generate_series(0, lb));
  for i in 1..la loop
    cur := array[i]; best := i;
    for j in 1..lb loop
      cur := cur || least(prev[j + 1] + 1, cur[j] + 1,
        prev[j] + case when substr(a, i, 1) = substr(b, j, 1) then 0 else 1 end);
      best := least(best, cur[j + 1]);
    end loop;
    if best > max_d then return max_d + 1; end if;
    prev := cur;
  end loop;
  return least(prev[lb + 1], max_d + 1);
end $f$`;

async function createTable(db: Kysely<any>, table: string, columns: Columns, extra: string, about: string) {
  await sql
    .raw(`create table ${table} (${columns.map(([n, t]) => `${n} ${t}`).join(', ')}${extra})`)
    .execute(db);
  await sql.raw(`comment on table ${table} is ${lit(about)}`).execute(db);
  for (const [name, , comment] of columns)
    await sql.raw(`comment on column ${table}.${name} is ${lit(comment)}`).execute(db);
  await sql.raw(`alter table ${table} enable row level security`).execute(db);
  await sql
    .raw(`create policy ${table}_by_account on ${table} for all using (${VISIBLE('account')})`)
    .execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  await createTable(
    db,
    'manual_matches',
    MATCH_COLUMNS,
    `, check ((undone_at is null) = (undone_by is null))`,
    'Provider transactions paired by hand with ledger entries (1:1, 1:N, N:1 in one account and currency), with who, when and why, and their undo (docs/finance.md, Manual matches). Every reconcile run treats the items of a match that holds as matched.',
  );
  await createTable(
    db,
    'manual_match_items',
    ITEM_COLUMNS,
    ', primary key (match_id, side, item_id)',
    'The provider transactions and ledger entries of each manual match.',
  );
  await sql`create unique index manual_match_items_active_idx on manual_match_items (account, side, item_id)
    where undone_at is null`.execute(db);
  await sql`create trigger manual_match_items_data_change after insert or update or delete or truncate
    on manual_match_items for each statement execute function recon_work.note_data_change()`.execute(db);
  await createTable(
    db,
    'match_candidates',
    CANDIDATE_COLUMNS,
    ', primary key (discrepancy_id, side, candidate_id)',
    'Near-miss candidates: for each open missing_in_ledger and missing_at_provider discrepancy, up to five items of the other side with every check passed or failed in words (docs/finance.md, Candidates). Rewritten by each reconcile run for its range.',
  );
  await sql`create index match_candidates_date_idx on match_candidates (account, business_date)`.execute(db);
  // The candidate search of a run reads the open missing items of its dates (and a few days around)
  // through this index instead of every open discrepancy of the warehouse.
  await sql`create index discrepancies_unmatched_idx on discrepancies (account, business_date, currency)
    where resolved_at is null and kind in ('missing_in_ledger','missing_at_provider')`.execute(db);

  await sql
    .raw(
      `alter table discrepancy_events drop constraint discrepancy_events_event_check,
        add constraint discrepancy_events_event_check check (event in (${EVENTS_BEFORE},'matched','match_undone'))`,
    )
    .execute(db);

  // The extension where this role may create it (a savepoint: the DO block's exception handler).
  await sql
    .raw(
      `do $d$ begin
         begin
           create extension if not exists fuzzystrmatch with schema public;
           execute 'create function public.recon_id_distance(a text, b text, max_d integer) returns integer
             language sql immutable strict parallel safe
             as $$ select public.levenshtein_less_equal(a, b, max_d) $$';
         exception when others then
           execute ${lit(PLPGSQL_DISTANCE)};
         end;
       end $d$`,
    )
    .execute(db);
  await sql`comment on function public.recon_id_distance(text, text, integer) is 'The edit distance of two ids when it is at most max_d, else at least max_d + 1 (near-miss candidates).'`.execute(
    db,
  );
  await sql
    .raw(
      `do $$ begin
         if exists (select from pg_roles where rolname = 'recon_analyst') then
           grant select on manual_matches, manual_match_items, match_candidates to recon_analyst;
         end if;
       end $$`,
    )
    .execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function public.recon_id_distance(text, text, integer)`.execute(db);
  await sql`drop extension if exists fuzzystrmatch`.execute(db);
  await sql`delete from discrepancy_events where event in ('matched','match_undone')`.execute(db);
  await sql
    .raw(
      `alter table discrepancy_events drop constraint discrepancy_events_event_check,
        add constraint discrepancy_events_event_check check (event in (${EVENTS_BEFORE}))`,
    )
    .execute(db);
  await sql`drop index discrepancies_unmatched_idx`.execute(db);
  await sql`drop table match_candidates, manual_match_items, manual_matches`.execute(db);
}
