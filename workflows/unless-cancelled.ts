import { isCancellation } from '@temporalio/workflow';

/**
 * Runs `work`; when it fails for any reason but cancellation, returns `failed(error)` instead. A
 * cancelled run stops at once, while the failure of one account, alert or volume check is kept
 * as an outcome and never stops the others.
 */
export async function unlessCancelled<T>(work: () => Promise<T>, failed: (error: unknown) => T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (isCancellation(error)) throw error;
    return failed(error);
  }
}
