import { createSendAlert } from './alerts/send-alert.ts';
import type { ActivityDependencies } from './dependencies.ts';
import { withFailureMapping } from './failure-mapping.ts';
import { createPullSource } from './ingest/pull-source.ts';
import { createFollowUpNonFinal } from './ingest/follow-up-non-final.ts';
import { createReconcileWindow } from './reconcile/reconcile-window.ts';
import { createClearPersonalData } from './retention/clear-personal-data.ts';
import { createListAccounts } from './accounts/list-accounts.ts';
import { createCheckVolume } from './reconcile/check-volume.ts';

export type { ActivityDependencies } from './dependencies.ts';

/**
 * The activities the worker registers, built from their dependencies (no module state, so a test
 * hands in a real database and a real or sandbox provider). The property names are durable: the
 * workflow histories record them. Every activity maps its typed errors to Temporal failures.
 */
export function createActivities<Client>(deps: ActivityDependencies<Client>) {
  return {
    pullSource: withFailureMapping(createPullSource(deps)),
    reconcileWindow: withFailureMapping(createReconcileWindow(deps)),
    clearPersonalData: withFailureMapping(createClearPersonalData(deps)),
    sendAlert: withFailureMapping(createSendAlert(deps)),
    listAccounts: withFailureMapping(createListAccounts(deps)),
    checkVolume: withFailureMapping(createCheckVolume(deps)),
    followUpNonFinal: withFailureMapping(createFollowUpNonFinal(deps)),
  };
}

export type Activities = ReturnType<typeof createActivities>;
