import { Context } from '@temporalio/activity';
import type { ReconcileWindowSummary } from '../../workflows/types.ts';
import { heartbeatIntervalMs } from '../heartbeat-interval.ts';
import type { ActivityDependencies } from '../dependencies.ts';

/**
 * The numeric fields of a summary, up to three levels deep (`matched.transactions`,
 * `discrepancies.fee_mismatch.cents`), settings left out: only counts go into the history.
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
 * Builds the reconciliation activity: matches the window's Eastern days with `reconcileRange`, which
 * is idempotent and safe next to overlapping runs, so a retry simply runs it again. Only the counts
 * of its summary go back into the workflow history.
 */
export function createReconcileWindow<Client>(deps: ActivityDependencies<Client>) {
  return async function reconcileWindow(input: {
    from: string;
    to: string;
  }): Promise<ReconcileWindowSummary> {
    const ctx = Context.current();
    const timer = setInterval(
      () => ctx.heartbeat(),
      heartbeatIntervalMs(deps.heartbeatEverySeconds, ctx.info.heartbeatTimeoutMs),
    );
    try {
      const summary = await deps.reconcileRange(deps.handle.db, { from: input.from, to: input.to });
      return { from: input.from, to: input.to, counts: numericCounts(summary) };
    } finally {
      clearInterval(timer);
    }
  };
}
