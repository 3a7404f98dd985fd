import type { ServerResponse } from 'node:http';
import { count, takeFault } from './faults.ts';
import { write } from './http.ts';
import type { SandboxState } from './state.ts';

/** Bytes a truncated ZIP loses at its end. */
const TRUNCATED_TAIL = 512;

/**
 * Streams a report or legacy body as it is generated, applying the body faults: a cut connection
 * (cuts, cutRate), a zip that loses its end (truncateZip), or a body that ends cleanly too soon
 * (shortBodyBytes).
 */
export async function streamBody(
  state: SandboxState,
  res: ServerResponse,
  contentType: string,
  chunks: AsyncIterable<string | Buffer>,
  zipped: boolean,
): Promise<void> {
  const { faults } = state;
  const cut = takeFault(state, 'cuts', faults.cutRate);
  const cutAfter = faults.cutAfterBytes ?? 2048;
  const truncate = zipped && faults.truncateZip === true;
  const short = zipped ? undefined : faults.shortBodyBytes;
  if (cut) count(state.stats.faultsInjected, 'cut');
  if (short !== undefined) count(state.stats.faultsInjected, 'short-body');
  if (truncate) count(state.stats.faultsInjected, 'truncated-zip');
  res.writeHead(200, { 'content-type': contentType });
  res.flushHeaders();
  let sent = 0;
  let tail = Buffer.alloc(0);
  for await (const chunk of chunks) {
    let buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (truncate) {
      // A truncated archive is everything but its last bytes (last deflate block, data descriptor,
      // central directory): hold back a rolling tail and never send it.
      tail = Buffer.concat([tail, buffer]);
      if (tail.length > TRUNCATED_TAIL) {
        await write(res, tail.subarray(0, tail.length - TRUNCATED_TAIL));
        tail = Buffer.from(tail.subarray(tail.length - TRUNCATED_TAIL));
      }
      continue;
    }
    if (cut && sent + buffer.length > cutAfter) {
      buffer = buffer.subarray(0, Math.max(0, cutAfter - sent));
      // Let the bytes reach the client before the connection goes, as a real cut would.
      await new Promise<void>((resolve) => res.write(buffer, () => resolve()));
      await new Promise((resolve) => setTimeout(resolve, 20));
      res.destroy();
      return;
    }
    if (short !== undefined && sent + buffer.length >= short) {
      // A body that ends cleanly before its data does: the response is complete at the HTTP level.
      await write(res, buffer.subarray(0, Math.max(0, short - sent)));
      res.end();
      return;
    }
    sent += buffer.length;
    await write(res, buffer);
    if (res.destroyed) return;
  }
  if (cut) {
    res.destroy(); // shorter than cutAfterBytes: cut at the very end, before the chunked terminator
    return;
  }
  res.end();
}
