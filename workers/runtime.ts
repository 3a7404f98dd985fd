import { DefaultLogger, type LogLevel, makeTelemetryFilterString, Runtime } from '@temporalio/worker';

let installed = false;

/**
 * Installs the Temporal runtime once per process, before any connection: SDK logs at `level` on
 * stderr, the native core's only at ERROR (its WARN lines about late completions of cancelled
 * activities are expected during a cancel or a shutdown). `shutdownSignals: []` leaves SIGINT and
 * SIGTERM to the command (recon backfill detaches on Ctrl-C, recon demo cleans up); the default
 * lets the SDK shut workers down gracefully on them, as `recon worker` wants. With
 * `prometheusBindAddress` the SDK serves its runtime metrics there (`recon worker` appends them to
 * its own `/metrics`).
 */
export function installRuntime(
  options: { level?: LogLevel; shutdownSignals?: NodeJS.Signals[]; prometheusBindAddress?: string } = {},
): void {
  if (installed) return;
  installed = true;
  Runtime.install({
    logger: new DefaultLogger(options.level ?? 'WARN'),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }), forward: {} },
      ...(options.prometheusBindAddress
        ? {
            metrics: {
              prometheus: { bindAddress: options.prometheusBindAddress, useSecondsForDurations: true },
            },
          }
        : {}),
    },
    ...(options.shutdownSignals ? { shutdownSignals: options.shutdownSignals } : {}),
  });
}

/**
 * Shuts the runtime down at the end of a command. The SDK does it by itself when its last worker or
 * native connection closes; a command that only used a client (TEMPORAL_ADDRESS set) never had
 * one, and the runtime's log forwarding would keep the process alive after its work is done.
 */
export async function shutdownRuntime(): Promise<void> {
  if (!installed || Runtime._instance === undefined) return;
  await Runtime._instance.shutdown();
}
