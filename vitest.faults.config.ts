import { defineConfig } from 'vitest/config';

/**
 * `npm run test:faults`: real processes against a PostgreSQL of each file's own, which the tests
 * restart, crash and stall (test/support/fault-postgres.ts). Kept apart from `npm test` because
 * its files own whole servers and time real outages; one file at a time, so that an outage of one
 * file's server is not slowed by another's.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/faults/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
  },
});
