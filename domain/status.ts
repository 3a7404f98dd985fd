/**
 * The provider's status words (docs/provider-interface.md 3) on the canonical scale: notifications,
 * confirmations and the status lookup say SUCCESS, the reports SUCCESSFUL; the status lookup also
 * names RETURNED and RETURNED_WITH_REPRESENTMENT. Compared without regard to case.
 */

import type { CanonicalStatus } from './records.ts';

const PROVIDER_STATUS: Readonly<Record<string, CanonicalStatus>> = {
  SUCCESS: 'SUCCESSFUL',
  SUCCESSFUL: 'SUCCESSFUL',
  PENDING: 'PENDING',
  REJECTED: 'REJECTED',
  FAILED: 'FAILED',
  RETURNED: 'RETURNED',
  RETURNED_WITH_REPRESENTMENT: 'RETURNED',
};

/** The canonical status of a provider status word; null for a word with no published meaning (kept raw). */
export function canonicalProviderStatus(raw: string | null | undefined): CanonicalStatus | null {
  return raw ? (PROVIDER_STATUS[raw.toUpperCase()] ?? null) : null;
}
