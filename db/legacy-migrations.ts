/**
 * The migration history of warehouses migrated before the migrations were folded into
 * migrations/0001..0005: a warehouse whose kysely_migration lists every LEGACY_MIGRATIONS name has
 * exactly the schema that FOLDED_MIGRATIONS build (test/fixtures/schema/warehouse-schema.txt), so its
 * history rows are replaced by the folded names and nothing else changes (db/migrate.ts).
 */
export const LEGACY_MIGRATIONS: readonly string[] = [
  '2026_11_21_000100_create_warehouse',
  '2026_11_21_000200_lineage_without_row_triggers',
  '2026_11_21_000201_drop_transaction_at_index',
  '2026_11_21_000202_drop_unread_lineage_indexes',
  '2026_11_21_000300_reconciliation',
  '2026_11_21_000301_fee_schedule_rounding',
  '2026_11_21_000302_match_tables_without_row_triggers',
  '2026_11_21_000303_unlogged_match_tables',
  '2026_11_21_000400_create_pull_cursors',
  '2026_11_23_000100_settlement_totals_unknown_type',
  '2026_11_23_000200_unknown_columns',
  '2026_11_23_000300_personal_data_for_pipeline_only',
  '2026_11_23_000600_quarantine_raw_bytes',
  '2026_11_23_000700_crash_safe_matches_and_pipeline_locks',
  '2026_11_23_000800_workbench',
  '2026_11_23_000900_alert_deliveries',
  '2026_11_23_001100_window_sized_totals_compaction',
];

/** The migrations that build the schema of the complete legacy history, in order. */
export const FOLDED_MIGRATIONS: readonly string[] = [
  '0001_warehouse_tables',
  '0002_notifications',
  '0003_reconciliation',
  '0004_workbench',
  '0005_analysts_and_privacy',
];
