import { defineConfig } from 'vitest/config';

/**
 * `npm run test:security`: the workbench against an attacker who can reach it (docs/security.md),
 * every case over HTTP against a real server and a real PostgreSQL, concurrent cases with real
 * concurrent requests. Kept apart from `npm test` so that its timing-sensitive bursts do not share
 * the machine with the rest of the suite.
 */
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/security/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
