import type { Kysely, Transaction } from 'kysely';
import type { Spec } from '../domain/columns.ts';
import { alertDeliveriesColumns, type AlertDeliveriesTable } from './alert-deliveries.table.ts';
import { discrepanciesColumns, type DiscrepanciesTable } from './discrepancies.table.ts';
import { discrepancyEventsColumns, type DiscrepancyEventsTable } from './discrepancy-events.table.ts';
import { discrepancyTotalsColumns, type DiscrepancyTotalsTable } from './discrepancy-totals.table.ts';
import { feeScheduleColumns, type FeeScheduleTable } from './fee-schedule.table.ts';
import { legacyTransactionsColumns, type LegacyTransactionsTable } from './legacy-transactions.table.ts';
import { loadsColumns, type LoadsTable } from './loads.table.ts';
import { manualMatchItemsColumns, type ManualMatchItemsTable } from './manual-match-items.table.ts';
import { manualMatchesColumns, type ManualMatchesTable } from './manual-matches.table.ts';
import { matchCandidatesColumns, type MatchCandidatesTable } from './match-candidates.table.ts';
import { matchingTolerancesColumns, type MatchingTolerancesTable } from './matching-tolerances.table.ts';
import { merchantLedgerColumns, type MerchantLedgerTable } from './merchant-ledger.table.ts';
import {
  notificationQuarantineColumns,
  type NotificationQuarantineTable,
} from './notification-quarantine.table.ts';
import { notificationMatchesColumns, type NotificationMatchesTable } from './notification-matches.table.ts';
import { notificationsColumns, type NotificationsTable } from './notifications.table.ts';
import { providerAdjustmentsColumns, type ProviderAdjustmentsTable } from './provider-adjustments.table.ts';
import { providerReturnsColumns, type ProviderReturnsTable } from './provider-returns.table.ts';
import {
  providerTransactionsColumns,
  type ProviderTransactionsTable,
} from './provider-transactions.table.ts';
import { pullCursorsColumns, type PullCursorsTable } from './pull-cursors.table.ts';
import { reconcileRunsColumns, type ReconcileRunsTable } from './reconcile-runs.table.ts';
import { reconcileSettingsColumns, type ReconcileSettingsTable } from './reconcile-settings.table.ts';
import { rejectedRowsColumns, type RejectedRowsTable } from './rejected-rows.table.ts';
import { returnMatchesColumns, type ReturnMatchesTable } from './return-matches.table.ts';
import { rowHistoryColumns, type RowHistoryTable } from './row-history.table.ts';
import { sourceMatchesColumns, type SourceMatchesTable } from './source-matches.table.ts';
import { statusLookupsColumns, type StatusLookupsTable } from './status-lookups.table.ts';
import { transactionMatchesColumns, type TransactionMatchesTable } from './transaction-matches.table.ts';
import { volumeFlagsColumns, type VolumeFlagsTable } from './volume-flags.table.ts';
import { warehouseSettingsColumns, type WarehouseSettingsTable } from './warehouse-settings.table.ts';
import { workbenchSessionsColumns, type WorkbenchSessionsTable } from './workbench-sessions.table.ts';
import {
  workbenchSignInThrottleColumns,
  type WorkbenchSignInThrottleTable,
} from './workbench-sign-in-throttle.table.ts';
import {
  providerTransactionDaysColumns,
  type ProviderTransactionDaysTable,
} from './provider-transaction-days.table.ts';
import { workbenchTokensColumns, type WorkbenchTokensTable } from './workbench-tokens.table.ts';
import { workbenchUsersColumns, type WorkbenchUsersTable } from './workbench-users.table.ts';
import { writeOffsColumns, type WriteOffsTable } from './write-offs.table.ts';

/** The warehouse as Kysely sees it. Add a table here and in {@link tableColumns} together. */
export interface Database {
  alert_deliveries: AlertDeliveriesTable;
  discrepancies: DiscrepanciesTable;
  discrepancy_events: DiscrepancyEventsTable;
  discrepancy_totals: DiscrepancyTotalsTable;
  fee_schedule: FeeScheduleTable;
  legacy_transactions: LegacyTransactionsTable;
  loads: LoadsTable;
  manual_match_items: ManualMatchItemsTable;
  manual_matches: ManualMatchesTable;
  match_candidates: MatchCandidatesTable;
  matching_tolerances: MatchingTolerancesTable;
  merchant_ledger: MerchantLedgerTable;
  notification_matches: NotificationMatchesTable;
  notification_quarantine: NotificationQuarantineTable;
  notifications: NotificationsTable;
  provider_adjustments: ProviderAdjustmentsTable;
  provider_returns: ProviderReturnsTable;
  provider_transaction_days: ProviderTransactionDaysTable;
  provider_transactions: ProviderTransactionsTable;
  pull_cursors: PullCursorsTable;
  reconcile_runs: ReconcileRunsTable;
  reconcile_settings: ReconcileSettingsTable;
  rejected_rows: RejectedRowsTable;
  return_matches: ReturnMatchesTable;
  row_history: RowHistoryTable;
  source_matches: SourceMatchesTable;
  status_lookups: StatusLookupsTable;
  transaction_matches: TransactionMatchesTable;
  volume_flags: VolumeFlagsTable;
  warehouse_settings: WarehouseSettingsTable;
  workbench_sessions: WorkbenchSessionsTable;
  workbench_sign_in_throttle: WorkbenchSignInThrottleTable;
  workbench_tokens: WorkbenchTokensTable;
  workbench_users: WorkbenchUsersTable;
  write_offs: WriteOffsTable;
}

/** Runtime column specs of every table, compared with the migrated schema by a test. */
export const tableColumns: { [T in keyof Database]: Record<keyof Database[T], Spec> } = {
  alert_deliveries: alertDeliveriesColumns,
  discrepancies: discrepanciesColumns,
  discrepancy_events: discrepancyEventsColumns,
  discrepancy_totals: discrepancyTotalsColumns,
  fee_schedule: feeScheduleColumns,
  legacy_transactions: legacyTransactionsColumns,
  loads: loadsColumns,
  manual_match_items: manualMatchItemsColumns,
  manual_matches: manualMatchesColumns,
  match_candidates: matchCandidatesColumns,
  matching_tolerances: matchingTolerancesColumns,
  merchant_ledger: merchantLedgerColumns,
  notification_matches: notificationMatchesColumns,
  notification_quarantine: notificationQuarantineColumns,
  notifications: notificationsColumns,
  provider_adjustments: providerAdjustmentsColumns,
  provider_returns: providerReturnsColumns,
  provider_transaction_days: providerTransactionDaysColumns,
  provider_transactions: providerTransactionsColumns,
  pull_cursors: pullCursorsColumns,
  reconcile_runs: reconcileRunsColumns,
  reconcile_settings: reconcileSettingsColumns,
  rejected_rows: rejectedRowsColumns,
  return_matches: returnMatchesColumns,
  row_history: rowHistoryColumns,
  source_matches: sourceMatchesColumns,
  status_lookups: statusLookupsColumns,
  transaction_matches: transactionMatchesColumns,
  volume_flags: volumeFlagsColumns,
  warehouse_settings: warehouseSettingsColumns,
  workbench_sessions: workbenchSessionsColumns,
  workbench_sign_in_throttle: workbenchSignInThrottleColumns,
  workbench_tokens: workbenchTokensColumns,
  workbench_users: workbenchUsersColumns,
  write_offs: writeOffsColumns,
};

/** A database or an open transaction: query functions take either as their first argument. */
export type Db = Kysely<Database> | Transaction<Database>;
