import type { DiscrepancyTotal, ReconcileOutcome, ReconcileWindowSummary } from '../../domain/run-summary.ts';
import { whileHeartbeating } from '../heartbeat-interval.ts';
import type { ActivityDependencies } from '../dependencies.ts';

/**
 * The numeric fields of a summary, up to three levels deep (`matched.transactions`,
 * `lifecycle.opened`), settings and lists left out: only counts go into the history. Amounts are
 * lists with their currency in a reconciliation summary, so none comes out here.
 */
export function numericCounts(summary: unknown): Record<string, number> {
  const counts: Record<string, number> = {};
  const visit = (value: unknown, prefix: string, depth: number) => {
    if (typeof value === 'number' && Number.isFinite(value)) counts[prefix] = value;
    else if (value && typeof value === 'object' && !Array.isArray(value) && depth < 3) {
      for (const [k, v] of Object.entries(value)) {
        if (depth === 0 && k === 'settings') continue;
        visit(v, prefix ? `${prefix}.${k}` : k, depth + 1);
      }
    }
  };
  visit(summary, '', 0);
  return counts;
}

/**
 * The `discrepancies` list of a summary (kind, currency, count, amount_cents), each amount with its
 * currency; entries of another shape are left out, and a summary without the list gives none.
 */
export function discrepancyTotals(summary: unknown): DiscrepancyTotal[] {
  const list = (summary as { discrepancies?: unknown } | null)?.discrepancies;
  if (!Array.isArray(list)) return [];
  return list.flatMap((d: Partial<DiscrepancyTotal>) =>
    typeof d?.kind === 'string' &&
    (typeof d.currency === 'string' || d.currency === null) &&
    typeof d.count === 'number' &&
    typeof d.amount_cents === 'number'
      ? [{ kind: d.kind, currency: d.currency, count: d.count, amount_cents: d.amount_cents }]
      : [],
  );
}

/**
 * The window's summary from the run's outcome: typed (`run`), and flat for readers of older
 * histories (`counts`). A dependency given by a test may return part of an outcome only.
 */
export function windowSummary(
  window: { from: string; to: string },
  outcome: Partial<ReconcileOutcome>,
): ReconcileWindowSummary {
  return {
    from: window.from,
    to: window.to,
    counts: numericCounts(outcome),
    discrepancies: discrepancyTotals(outcome),
    run: { runId: outcome.runId ?? null, lifecycle: { ...outcome.lifecycle } },
  };
}

/**
 * Builds the reconciliation activity: matches the window's Eastern days with `reconcileRange`, which
 * is idempotent and safe next to overlapping runs, so a retry simply runs it again. Only the counts
 * of its summary and its discrepancies by kind and currency go back into the workflow history.
 */
export function createReconcileWindow<Client>(deps: ActivityDependencies<Client>) {
  return async function reconcileWindow(input: {
    from: string;
    to: string;
    /** The window's account, when the run is per account. */
    account?: string;
    /** The instant grace periods are judged against (a night run as of a given day); default now. */
    now?: string;
  }): Promise<ReconcileWindowSummary> {
    const summary = await whileHeartbeating(deps.heartbeatEverySeconds, () =>
      deps.reconcileRange(deps.handle.db, {
        from: input.from,
        to: input.to,
        ...(input.account === undefined ? {} : { account: input.account }),
        ...(input.now === undefined ? {} : { now: input.now }),
        settings: { stuckPendingBusinessDays: deps.config.followUp.stuckPendingDays },
        followUpDays: deps.config.followUp.days,
      }),
    );
    return windowSummary(input, summary);
  };
}
