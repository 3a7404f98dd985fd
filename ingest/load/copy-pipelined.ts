import type { Writable } from 'node:stream';
import type pg from 'pg';

/** The protocol's CopyData ('d') message type, and a CopyDone ('c') message. */
const COPY_DATA = 0x64;
const COPY_DONE = Buffer.from([0x63, 0, 0, 0, 4]);

/**
 * A simple query ending in `copy ... from stdin`, sent with its COPY text right after it: no round
 * trip between the query and its data. pg-copy-streams waits for the server's CopyInResponse before
 * it sends any data, a wait of the backend for Node's next turn at every COPY
 * (docs/benchmark-record.md §3).
 *
 * PostgreSQL's protocol allows it ("COPY Operations" in the protocol's message flow): when a
 * statement of a simple query fails, the rest of the query is discarded, ReadyForQuery is sent, and
 * any CopyData, CopyDone or CopyFail that the frontend sent meanwhile is dropped. So a failed
 * statement (a stored key, a bad value, an aborted transaction before the COPY even starts) surfaces
 * as the driver's own error (pg's DatabaseError, its `code` the SQLSTATE), the connection is ready
 * for the next query, and nothing sent after the failure is read as data of another statement.
 */
class PipelinedCopy {
  private readonly text: string;
  private readonly data: readonly Buffer[];
  private readonly done: (error?: unknown) => void;
  private settled = false;

  constructor(text: string, data: readonly Buffer[], done: (error?: unknown) => void) {
    this.text = text;
    this.data = data;
    this.done = done;
  }

  /** Called by pg when the query's turn comes on the connection. */
  submit(connection: { query(text: string): void; stream: Writable }): void {
    connection.query(this.text);
    void this.send(connection.stream);
  }

  /**
   * Writes the COPY text as the socket takes it, as pg-copy-streams does. Stops at a failure: the
   * server drops whatever comes after it anyway, and the connection's next query may follow.
   */
  private async send(stream: Writable): Promise<void> {
    try {
      for (const data of this.data) {
        if (this.settled) return;
        if (data.length === 0) continue;
        const header = Buffer.allocUnsafe(5);
        header[0] = COPY_DATA;
        header.writeUInt32BE(data.length + 4, 1);
        stream.write(header);
        if (!stream.write(data)) await drained(stream);
      }
      if (!this.settled) stream.write(COPY_DONE);
    } catch {
      // A broken connection fails the query through the driver (handleError).
    }
  }

  /** pg replaces it when a query timeout is set; called when the query ends either way. */
  callback(_error?: unknown): void {}

  handleError(error: unknown): void {
    this.callback(error);
    this.settle(error);
  }

  handleReadyForQuery(): void {
    this.callback();
    this.settle();
  }

  // The server's answers to the statements: nothing to keep (the caller counts its rows itself).
  handleCopyInResponse(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}

  private settle(error?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.done(error);
  }
}

/**
 * Runs `text`, a simple query whose last statement is a `copy ... from stdin` of the COPY text
 * `data`, in one round trip ({@link PipelinedCopy}). Rejects with the error of the first statement
 * that fails; the connection is then ready for the next query.
 */
export function copyPipelined(client: pg.ClientBase, text: string, data: readonly Buffer[]): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const query = new PipelinedCopy(text, data, (error) => (error === undefined ? resolve() : reject(error)));
    client.query(query as unknown as pg.Submittable);
  });
}

/** Resolves when `stream` can take more, or has failed or closed. */
function drained(stream: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('error', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('error', done);
    stream.on('close', done);
  });
}
