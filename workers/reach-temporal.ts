import { typedError } from '../domain/errors.ts';

/** Temporal did not answer at the configured address. Retryable: the server may come back. */
export class TemporalUnreachable extends typedError<{ readonly address: string }>('retryable') {
  constructor(address: string, reason: string, options?: ErrorOptions) {
    super(
      `cannot reach Temporal at ${address} (${reason}): check TEMPORAL_ADDRESS and that the Temporal server is running and reachable from here`,
      { address },
      options,
    );
  }
}

/** An address as it may be printed: host and port, without any user or password. */
export function printableAddress(address: string): string {
  return address.replace(/^([a-z][a-z0-9+.-]*:\/\/)?[^@/]*@/i, '$1');
}

/**
 * Runs one connection attempt to Temporal (`Connection.connect`, `NativeConnection.connect`) and turns
 * its failure ("Failed to connect before the deadline", a refused connection, a bad address) into
 * {@link TemporalUnreachable}, which names the address and what to check.
 */
export async function reachTemporal<T>(address: string, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (error) {
    const reason = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
    throw new TemporalUnreachable(printableAddress(address), reason.slice(0, 200), { cause: error });
  }
}
