import { describe, expect, it } from 'vitest';
import { insertFeeSchedule } from '../../sandbox/load-merchant-side.ts';
import { SANDBOX_FEE_SCHEDULE } from '../../sandbox/merchant-view/fee-schedule.ts';
import { useTestDatabase } from '../support/database.ts';

/**
 * A second `recon demo` on the warehouse the first one left "adds to what is there" (docs/getting-
 * started.md): writing the sandbox merchant's fee contract again must not fail on its primary key
 * (it did: `duplicate key value violates unique constraint "fee_schedule_pkey"`, exit 1).
 */
const h = useTestDatabase(1);

describe("the demo merchant's fee schedule", () => {
  it('is written again without a duplicate and without a second copy', async () => {
    await insertFeeSchedule(h.db, SANDBOX_FEE_SCHEDULE);
    await insertFeeSchedule(h.db, SANDBOX_FEE_SCHEDULE);
    const rows = await h.db.selectFrom('fee_schedule').selectAll().execute();
    expect(rows).toHaveLength(SANDBOX_FEE_SCHEDULE.length);
  });
});
