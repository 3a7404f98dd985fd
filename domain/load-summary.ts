/**
 * The one shape of what a load did: the loader returns it, `recon pull` / `recon import` print it,
 * the pull activity returns it to the workflows with its window. Pure types and a pure function, so
 * that workflows may import it.
 */

import type { LoadSource, Source } from './records.ts';

export interface LoadSummary {
  readonly loadId: number;
  readonly source: LoadSource;
  readonly status: 'committed' | 'failed';
  readonly rowsRead: number;
  readonly rowsLoaded: number;
  readonly rowsRejected: number;
  readonly rowsInserted: number;
  readonly rowsUpdated: number;
  readonly rowsUnchanged: number;
  readonly fileSha256: string | null;
  readonly bytes: number;
  readonly zipped: boolean;
  readonly durationMs: number;
}

/** The counts of a load that travel through workflow histories (never a checksum or a size). */
export type LoadCounts = Pick<
  LoadSummary,
  | 'loadId'
  | 'status'
  | 'rowsRead'
  | 'rowsLoaded'
  | 'rowsRejected'
  | 'rowsInserted'
  | 'rowsUpdated'
  | 'rowsUnchanged'
  | 'durationMs'
>;

/**
 * What one pull of a workflow did: its load's counts for one source and window. `skipped` means this
 * workflow run had already committed that load: it counts as read and loaded, with nothing inserted
 * or updated and no time spent.
 */
export interface PullSummary extends LoadCounts {
  readonly source: Source;
  readonly from: string;
  readonly to: string;
  readonly skipped: boolean;
}

/** The {@link PullSummary} of a load, in the field order the recorded histories hold. */
export function pullSummary(
  window: { readonly source: Source; readonly from: string; readonly to: string },
  load: LoadSummary,
  skipped: boolean,
): PullSummary {
  return {
    source: window.source,
    from: window.from,
    to: window.to,
    loadId: load.loadId,
    status: load.status,
    rowsRead: load.rowsRead,
    rowsLoaded: load.rowsLoaded,
    rowsRejected: load.rowsRejected,
    rowsInserted: skipped ? 0 : load.rowsInserted,
    rowsUpdated: skipped ? 0 : load.rowsUpdated,
    rowsUnchanged: skipped ? load.rowsLoaded : load.rowsUnchanged,
    skipped,
    durationMs: skipped ? 0 : load.durationMs,
  };
}
