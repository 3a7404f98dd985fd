/**
 * The workflows the worker registers. Their exported names are durable: running histories and the
 * schedule record them, so a rename needs a versioning plan, not a search-and-replace.
 */
export { backfillWorkflow } from './backfill-workflow.ts';
export { nightlyWorkflow } from './nightly-workflow.ts';
export { windowWorkflow } from './window-workflow.ts';
