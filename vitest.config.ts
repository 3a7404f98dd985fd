import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The Temporal native bridge does not survive worker threads (known SDK issue): every suite runs in forks.
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    // test/faults owns whole servers that it crashes: `npm run test:faults` (vitest.faults.config.ts);
    // test/security is `npm run test:security` (vitest.security.config.ts).
    exclude: ['test/faults/**', 'test/security/**', '**/node_modules/**'],
    // The Postgres template for every test file; the workflow bundle, built once for every worker.
    globalSetup: ['test/global-setup.ts', 'test/workflow-bundle-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});
