import { type RawBuilder, sql } from 'kysely';
import { estimatedRows, probeEach, rowCount, rowsWithKeys } from './keyed-rows.ts';
import { exec, type RuleContext } from './statement.ts';

/**
 * The scope of a run over changed keys (docs/architecture.md, "A re-run costs what the change
 * touches"): the rows of the range that the keys written since its dates were last matched reach,
 * closed over what the rules join on, so that matching them gives what a full run gives them.
 *
 * Reads the run's temporary tables changed_t (provider transaction ids), changed_m (merchant
 * transaction ids), changed_r (return transaction ids) and flagged_days (dates whose due or stuck
 * state moved), filled by reconcile/incremental.ts; creates scope_p, scope_l and scope_r as
 * reconcile/rules/scope.ts does for a full run. Each part finds the rows of its keys one index
 * descent per key while the keys are few against the rows it would otherwise read (the range's, or
 * the table's), and by a hash join with those rows when they are not (reconcile/rules/keyed-rows.ts):
 * its cost follows the number of keys, up to what reading the range would cost.
 *
 * - A provider transaction is matched with its merchant transaction id's ledger entry and duplicate
 *   group: a changed transaction id brings its merchant transaction id, a merchant transaction id
 *   every provider row of the range that carries it, and a row of the scope the ledger entry it
 *   claims now (the claim may move), until no more come.
 * - A return claims a ledger RETURN entry against the other returns of the range that could claim it:
 *   a return brings its candidate entries, and an entry every return of the range it is a candidate
 *   of, until no more come (scope_rl).
 * - A ledger entry is looked at when its own key, its original's, a return that could claim it or its
 *   date's due state changed.
 */
export async function fillChangedScope(ctx: RuleContext): Promise<void> {
  const rows = await rowsToRead(ctx);
  const t = await rowCount(ctx, 'changed_t');
  // A changed transaction's merchant transaction id, and the ledger entry it claims now (the claim
  // may move: the entry's other claimants are then looked at again). Each key once: the counts that
  // choose how each statement finds its rows read changed_m.
  await exec(
    ctx,
    sql`insert into changed_m (key) select merchant_transaction_id
      from ${rowsWithKeys('provider_transactions', 'transaction_id', keysOf('changed_t'), probeEach(t, rows.providers))} p
      where merchant_transaction_id is not null
      union select merchant_transaction_id
      from ${rowsWithKeys('transaction_matches', 'transaction_id', keysOf('changed_t'), probeEach(t, rows.claims))} tm
      except select key from changed_m`,
  );
  await exec(ctx, sql`analyze changed_m`);
  await fillProviderScope(ctx, rows, t);
  await fillReturnScope(ctx, rows, t);
  await fillLedgerScope(ctx, rows);
}

const keysOf = (table: string): RawBuilder<unknown> => sql`select key from ${sql.table(table)}`;

/** The planner's estimates of the rows a statement reads when it does not probe its keys one by one. */
interface RowsToRead {
  readonly providers: number;
  readonly claims: number;
  readonly providersInRange: number;
  readonly returnsInRange: number;
  readonly ledgerInRange: number;
}

async function rowsToRead(ctx: RuleContext): Promise<RowsToRead> {
  const { from, to } = ctx;
  return {
    providers: await estimatedRows(ctx, sql`select 1 from provider_transactions`),
    claims: await estimatedRows(ctx, sql`select 1 from transaction_matches`),
    providersInRange: await estimatedRows(
      ctx,
      sql`select 1 from provider_transactions where transaction_on between ${from}::date and ${to}::date`,
    ),
    returnsInRange: await estimatedRows(
      ctx,
      sql`select 1 from provider_returns where returned_on between ${from}::date and ${to}::date`,
    ),
    ledgerInRange: await estimatedRows(ctx, sql`select 1 from merchant_ledger l where ${bookedInRange(ctx)}`),
  };
}

function bookedInRange(ctx: RuleContext, alias = 'l'): RawBuilder<unknown> {
  const at = sql.ref(`${alias}.booked_at`);
  return sql`${at} >= (${ctx.from}::date)::timestamp at time zone 'America/Toronto'
    and ${at} < ((${ctx.to}::date + 1))::timestamp at time zone 'America/Toronto'`;
}

async function fillProviderScope(ctx: RuleContext, rows: RowsToRead, t: number): Promise<void> {
  const inRange = sql`transaction_on between ${ctx.from}::date and ${ctx.to}::date`;
  const within = sql`x.transaction_on between ${ctx.from}::date and ${ctx.to}::date`;
  const byMerchantId = async () =>
    rowsWithKeys(
      'provider_transactions',
      'merchant_transaction_id',
      keysOf('changed_m'),
      probeEach(await rowCount(ctx, 'changed_m'), rows.providersInRange),
      within,
    );
  await exec(
    ctx,
    sql`create temp table scope_p on commit drop as
      select transaction_id, merchant_transaction_id as mtid
      from ${rowsWithKeys('provider_transactions', 'transaction_id', keysOf('changed_t'), probeEach(t, rows.providersInRange), within)} p
      union select transaction_id, merchant_transaction_id from ${await byMerchantId()} p
      union select transaction_id, merchant_transaction_id from provider_transactions
      where transaction_on in (select business_date from flagged_days) and ${inRange}`,
  );
  // Every row of the scope is ranked with its whole duplicate group, and may give up the ledger entry
  // it claims now (a claim of a row that changed while outside the range, say): the other rows of
  // the range with those merchant transaction ids come in too, until no more come.
  for (;;) {
    await exec(
      ctx,
      sql`insert into changed_m (key)
        select s.mtid from scope_p s where s.mtid is not null
        union select tm.merchant_transaction_id from transaction_matches tm join scope_p s using (transaction_id)
        except select key from changed_m`,
    );
    const added = await exec(
      ctx,
      sql`insert into scope_p (transaction_id, mtid)
        select transaction_id, merchant_transaction_id from ${await byMerchantId()} p
        except select transaction_id, mtid from scope_p`,
    );
    if (added === 0) return;
  }
}

async function fillReturnScope(ctx: RuleContext, rows: RowsToRead, t: number): Promise<void> {
  const inRange = sql`r.returned_on between ${ctx.from}::date and ${ctx.to}::date`;
  const m = await rowCount(ctx, 'changed_m');
  const returns = (column: string, keys: string | RawBuilder<unknown>, n: number) =>
    rowsWithKeys(
      'provider_returns',
      column,
      typeof keys === 'string' ? keysOf(keys) : keys,
      probeEach(n, rows.returnsInRange),
      sql`x.returned_on between ${ctx.from}::date and ${ctx.to}::date`,
    );
  // The returns of the originals that carry a changed merchant transaction id: their ids are keys too.
  const originals = sql`select transaction_id from ${rowsWithKeys(
    'provider_transactions',
    'merchant_transaction_id',
    keysOf('changed_m'),
    probeEach(m, rows.providers),
  )} o`;
  await exec(
    ctx,
    sql`create temp table scope_r on commit drop as
      select r.return_transaction_id
      from ${returns('return_transaction_id', 'changed_r', await rowCount(ctx, 'changed_r'))} r
      union select r.return_transaction_id from ${returns('original_transaction_id', 'changed_t', t)} r
      union select r.return_transaction_id from ${returns('merchant_transaction_id', 'changed_m', m)} r
      union select r.return_transaction_id from ${returns('original_transaction_id', originals, m)} r
      union select r.return_transaction_id from provider_returns r
      where r.returned_on in (select business_date from flagged_days) and ${inRange}`,
  );
  await exec(ctx, sql`create temp table scope_rl (mtid text primary key) on commit drop`);
  // Ledger RETURN entries a return of the scope claims now or could claim (by its own id, its merchant
  // transaction id or its original's: a superset of return_candidates in returns.ts), and the returns of the range
  // that could claim those, until the scope stops growing.
  for (;;) {
    await exec(
      ctx,
      sql`insert into scope_rl (mtid)
        select m.ledger_merchant_transaction_id from scope_r s join return_matches m using (return_transaction_id)
        where m.ledger_merchant_transaction_id is not null
        union select l.merchant_transaction_id from scope_r s
        join merchant_ledger l on l.transaction_id = s.return_transaction_id where l.transaction_type = 'RETURN'
        union select l.merchant_transaction_id from scope_r s join provider_returns r using (return_transaction_id)
        join merchant_ledger l on l.original_merchant_transaction_id = r.merchant_transaction_id
        where l.transaction_type = 'RETURN'
        union select l.merchant_transaction_id from scope_r s join provider_returns r using (return_transaction_id)
        join provider_transactions o on o.transaction_id = r.original_transaction_id
        join merchant_ledger l on l.original_merchant_transaction_id = o.merchant_transaction_id
        where l.transaction_type = 'RETURN'
        on conflict do nothing`,
    );
    const added = await exec(
      ctx,
      sql`insert into scope_r (return_transaction_id)
        select r.return_transaction_id from scope_rl x join merchant_ledger l on l.merchant_transaction_id = x.mtid
        join provider_returns r on r.return_transaction_id = l.transaction_id where ${inRange}
        union select r.return_transaction_id from scope_rl x join merchant_ledger l on l.merchant_transaction_id = x.mtid
        join provider_returns r on r.merchant_transaction_id = l.original_merchant_transaction_id where ${inRange}
        union select r.return_transaction_id from scope_rl x join merchant_ledger l on l.merchant_transaction_id = x.mtid
        join provider_transactions o on o.merchant_transaction_id = l.original_merchant_transaction_id
        join provider_returns r on r.original_transaction_id = o.transaction_id where ${inRange}
        except select return_transaction_id from scope_r`,
    );
    if (added === 0) return;
  }
}

async function fillLedgerScope(ctx: RuleContext, rows: RowsToRead): Promise<void> {
  const bookedOn = `(booked_at at time zone 'America/Toronto')::date`;
  const ledger = async (column: string, keys: RawBuilder<unknown>, keyTable: string) =>
    sql`select merchant_transaction_id, transaction_type, booked_at
      from ${rowsWithKeys('merchant_ledger', column, keys, probeEach(await rowCount(ctx, keyTable), rows.ledgerInRange), bookedInRange(ctx, 'x'))} l`;
  await exec(
    ctx,
    sql`create temp table scope_l on commit drop as
      select merchant_transaction_id, transaction_type, ${sql.raw(bookedOn)} as booked_on from (
        ${await ledger('merchant_transaction_id', keysOf('changed_m'), 'changed_m')}
        union ${await ledger('merchant_transaction_id', sql`select mtid from scope_rl`, 'scope_rl')}
        union ${await ledger('original_merchant_transaction_id', keysOf('changed_m'), 'changed_m')}
        union ${await ledger('transaction_id', keysOf('changed_r'), 'changed_r')}
        union select l.merchant_transaction_id, l.transaction_type, l.booked_at from flagged_days f join merchant_ledger l
          on l.booked_at >= (f.business_date)::timestamp at time zone 'America/Toronto'
          and l.booked_at < (f.business_date + 1)::timestamp at time zone 'America/Toronto'
          where ${bookedInRange(ctx)}
      ) l`,
  );
}
