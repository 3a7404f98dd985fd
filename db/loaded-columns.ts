/**
 * How a loaded row came to the warehouse, beside the record's own fields (domain/record-columns.ts):
 * the loads that wrote it, its raw text, its times, which of its columns the input did not carry, and
 * its account. ingest/load/targets.ts keeps these out of the comparison of a row with its stored one.
 */

import { bigint, text, timestamptz } from '../domain/columns.ts';
import { rawColumn } from '../domain/record-columns.ts';

const loadedBy = {
  load_id: bigint.required,
  first_load_id: bigint.required,
  ...rawColumn,
  created_at: timestamptz.defaulted,
  updated_at: timestamptz.defaulted,
} as const;

/** A legacy transaction's lineage (its query_type is a record field). */
export const loadedColumns = {
  ...loadedBy,
  unknown_mask: bigint.nullable,
  account: text.defaulted,
} as const;

/** A report row's lineage: the source it was pulled from, then the load. */
export const pulledColumns = { source: text.required, ...loadedColumns } as const;

/** An adjustment's lineage: adjustments carry every column, so there is no unknown_mask. */
export const adjustmentLoadedColumns = {
  source: text.required,
  ...loadedBy,
  account: text.defaulted,
} as const;
