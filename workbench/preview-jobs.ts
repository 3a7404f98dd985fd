/**
 * The workbench's previews of tolerance proposals (docs/finance.md, "The preview page"): a preview
 * matches the whole history of the accounts it names, which takes minutes over a big history, so a
 * request starts it and answers at once; the preview runs in this process (reconcile/tolerances/
 * preview.ts, the same function as `recon rules preview`), and the page asks for its state until it is
 * done. One preview at a time per process (each one takes the reconcile lock of its accounts for its
 * duration, as a run does): a second one while one runs is refused (409), never queued.
 *
 * The jobs live in memory: the recorded preview (reconcile_settings) is what `apply` needs and it
 * survives a restart; the list of items and a preview still running do not (run it again).
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/database.ts';
import { ReconError, typedError } from '../domain/errors.ts';
import { previewSettings, type Preview } from '../reconcile/tolerances/preview.ts';
import type { SettingsProposal } from '../reconcile/tolerances/settings-file.ts';
import type { ReconcileSettings } from '../reconcile/settings.ts';

/** Finished previews kept for their pages; the oldest go first. */
const KEPT = 20;

/** A preview asked for while another one runs. */
export class PreviewBusy extends typedError('retryable') {}

export interface PreviewJob {
  readonly id: string;
  readonly by: string;
  readonly accounts: readonly string[];
  readonly startedAt: string;
  readonly status: 'running' | 'done' | 'failed';
  readonly finishedAt?: string;
  readonly preview?: Preview;
  /** Why it failed, in words a person can act on. */
  readonly message?: string;
}

export interface PreviewJobs {
  /** Starts previewing `proposal` for `by`; throws PreviewBusy when one runs. */
  start(proposal: SettingsProposal, by: string): PreviewJob;
  get(id: string): PreviewJob | undefined;
  /** Resolves when no preview runs (the server waits for it before it closes). */
  settled(): Promise<void>;
}

export function createPreviewJobs(
  db: Kysely<Database>,
  settings: Partial<ReconcileSettings> | undefined,
  log: (line: string) => void = () => {},
): PreviewJobs {
  const jobs = new Map<string, PreviewJob>();
  let running: { id: string; done: Promise<void> } | undefined;

  const finish = (job: PreviewJob, outcome: Partial<PreviewJob>) => {
    jobs.set(job.id, { ...job, ...outcome, finishedAt: new Date().toISOString() });
    const finished = [...jobs.values()].filter((j) => j.status !== 'running');
    for (const old of finished.slice(0, Math.max(0, finished.length - KEPT))) jobs.delete(old.id);
  };

  const run = async (job: PreviewJob, proposal: SettingsProposal) => {
    try {
      const preview = await previewSettings(db, proposal, { by: job.by, ...(settings ? { settings } : {}) });
      finish(job, { status: 'done', preview });
    } catch (error) {
      if (!(error instanceof ReconError))
        log(`workbench: preview ${job.id}: ${(error as Error).name}: ${(error as Error).message}`);
      finish(job, {
        status: 'failed',
        message:
          error instanceof ReconError
            ? error.message
            : 'the preview failed (the server log says why); nothing was written: run it again',
      });
    } finally {
      running = undefined;
    }
  };

  return {
    start(proposal, by) {
      if (running)
        throw new PreviewBusy(
          `preview ${running.id} is running: wait until it is done (its page shows when), then preview again`,
        );
      const job: PreviewJob = {
        id: randomUUID(),
        by,
        accounts: [...new Set(proposal.tolerances.map((t) => t.account))].sort(),
        startedAt: new Date().toISOString(),
        status: 'running',
      };
      jobs.set(job.id, job);
      running = { id: job.id, done: run(job, proposal) };
      return job;
    },
    get: (id) => jobs.get(id),
    settled: async () => {
      await running?.done;
    },
  };
}
