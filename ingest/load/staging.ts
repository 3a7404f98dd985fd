import { once } from 'node:events';
import type pg from 'pg';
import { from as copyFrom, type CopyStreamQuery } from 'pg-copy-streams';
import { redactPersonal } from '../../domain/privacy.ts';
import { copyLine, copyRecordLine } from './copy-text.ts';
import type { RecordKind } from '../../domain/sources.ts';
import { TARGETS, type Target } from './targets.ts';

/** Bytes gathered before one write to a COPY stream: few, large writes keep the per-row cost low. */
const FLUSH_BYTES = 64 * 1024;
/** Staging tables are named recon_work.<prefix><load id>_<part>_<kind>. */
const STAGING_PREFIX = 'ingest_staging_';
/** The same as a LIKE pattern (an underscore alone would match any character). */
const STAGING_LIKE = STAGING_PREFIX.replaceAll('_', '\\_');

interface CopySink {
  readonly table: string;
  client: pg.PoolClient | null;
  error: unknown;
  readonly stream: CopyStreamQuery;
  readonly columns: readonly string[];
  buffer: string;
  rows: number;
  /** Natural key column; null where duplicates are legitimate (adjustments) or for rejected rows. */
  readonly key: string | null;
  lastKey: string | null;
  /** Every key so far greater than the one before: then no key occurs twice. */
  keysIncrease: boolean;
}

/**
 * UNLOGGED staging tables of one load, filled through COPY (pg-copy-streams) on clients of the load's
 * pool: one table per record kind met in the file (created on first use) and one for rejected rows.
 * Every staged row carries `seq`, its ordinal in the file, so that the merge can keep the last of
 * duplicate keys deterministically, and `line`, for rejected rows and diagnostics.
 *
 * Backpressure: {@link add} returns a promise only when it flushed a buffer to a COPY stream that asked
 * to wait; awaiting it stops the parser, so memory stays bounded whatever the file size.
 */
export class StagingTables {
  private readonly sinks = new Map<string, CopySink>();
  private readonly reported = new Map<RecordKind, readonly string[] | undefined>();
  private readonly pool: pg.Pool;
  private readonly prefix: string;

  /** `part`: the batch of the file these tables stage (a number), or `all` for the whole file's rows of a kind. */
  constructor(pool: pg.Pool, loadId: number, part: number | 'all') {
    this.pool = pool;
    // In the pipeline's private schema: tables in public are readable by recon_analyst (default
    // privileges), and an analyst's open transaction that had read one blocked the DROP at the end.
    this.prefix = `recon_work.${STAGING_PREFIX}${loadId}_${part}`;
  }

  /** Name of the staging table of a kind (exists once a record of that kind was added). */
  tableOf(kind: RecordKind | 'rejected'): string {
    return `${this.prefix}_${kind.replace('-', '_')}`;
  }

  /**
   * Whether rows of `kind` staged here are read with the columns `reported` (as the parser reports
   * them now): true for the first row of a kind, which fixes them for this batch. False when the
   * parser's columns changed since: such a row belongs to a new batch, since the merge reads a batch
   * with one set of columns.
   */
  carriesAs(kind: RecordKind, reported: readonly string[] | undefined): boolean {
    if (!this.reported.has(kind)) {
      this.reported.set(kind, reported);
      return true;
    }
    return this.reported.get(kind) === reported;
  }

  /** The columns rows of `kind` were staged with ({@link carriesAs}); undefined: every column. */
  carriedOf(kind: RecordKind): readonly string[] | undefined {
    return this.reported.get(kind);
  }

  /** Whether nothing was staged here. */
  get empty(): boolean {
    return this.sinks.size === 0;
  }

  /** Whether at least one record of `kind` (or one rejected record) was staged. */
  has(kind: RecordKind | 'rejected'): boolean {
    return this.sinks.has(kind);
  }

  add(kind: RecordKind, seq: number, line: number, record: Record<string, unknown>): Promise<void> | void {
    const sink = this.sinks.get(kind);
    if (!sink) return this.open(kind).then((s) => this.push(s, seq, line, record));
    return this.push(sink, seq, line, record);
  }

  /** Stages a rejected record; its reason is redacted (analysts read it), its raw line is kept. */
  reject(seq: number, line: number, raw: string, why: string): Promise<void> | void {
    const reason = redactPersonal(why);
    const sink = this.sinks.get('rejected');
    if (!sink) return this.open('rejected').then((s) => this.pushRaw(s, copyLine([seq, line, raw, reason])));
    return this.pushRaw(sink, copyLine([seq, line, raw, reason]));
  }

  /**
   * Stages a row already encoded as the COPY text of its record columns (rows whose COPY straight into
   * their table met a stored key: `NewRowsWriter`); `key` is its natural key.
   */
  addEncoded(kind: RecordKind, seq: number, line: number, key: string, fields: string): Promise<void> | void {
    const sink = this.sinks.get(kind);
    if (!sink) return this.open(kind).then((s) => this.pushEncoded(s, seq, line, key, fields));
    return this.pushEncoded(sink, seq, line, key, fields);
  }

  private push(sink: CopySink, seq: number, line: number, record: Record<string, unknown>) {
    if (sink.keysIncrease && sink.key !== null) this.noteKey(sink, String(record[sink.key]));
    return this.pushRaw(sink, copyRecordLine(seq, line, record, sink.columns));
  }

  private pushEncoded(sink: CopySink, seq: number, line: number, key: string, fields: string) {
    if (sink.keysIncrease && sink.key !== null) this.noteKey(sink, key);
    return this.pushRaw(sink, `${seq}\t${line}\t${fields}\n`);
  }

  /** Keeps {@link CopySink.keysIncrease}: each key greater than the one before. */
  private noteKey(sink: CopySink, key: string): void {
    if (sink.lastKey !== null && !(key > sink.lastKey)) sink.keysIncrease = false;
    sink.lastKey = key;
  }

  private pushRaw(sink: CopySink, text: string): Promise<void> | void {
    sink.buffer += text;
    sink.rows++;
    if (sink.buffer.length >= FLUSH_BYTES) return this.flush(sink);
  }

  private async flush(sink: CopySink): Promise<void> {
    if (sink.error) throw sink.error;
    const chunk = sink.buffer;
    sink.buffer = '';
    if (chunk.length > 0 && !sink.stream.write(chunk)) await once(sink.stream, 'drain');
  }

  private async open(kind: RecordKind | 'rejected'): Promise<CopySink> {
    const table = this.tableOf(kind);
    let columns: readonly string[];
    let ddl: string;
    if (kind === 'rejected') {
      columns = [];
      ddl = 'seq bigint not null, line bigint not null, raw text not null, reason text not null';
    } else {
      const t: Target = TARGETS[kind];
      columns = t.columns;
      ddl = [
        'seq bigint not null',
        'line bigint not null',
        ...columns.map((c) => `${c} ${t.stagingTypes[c]}`),
      ].join(', ');
    }
    const client = await this.pool.connect();
    try {
      // UNLOGGED: staging is rebuilt by a retry anyway, so it need not survive a crash (no WAL to write).
      // Created in the COPY's own transaction so that COPY can FREEZE its rows: the merge then reads
      // them without setting hint bits, i.e. without dirtying and writing every staged page once more.
      await client.query('begin');
      await client.query(`drop table if exists ${table}`);
      await client.query(`create unlogged table ${table} (${ddl})`);
      const copyColumns =
        kind === 'rejected' ? 'seq, line, raw, reason' : ['seq', 'line', ...columns].join(', ');
      const stream = client.query(copyFrom(`copy ${table} (${copyColumns}) from stdin with (freeze)`));
      const key = kind === 'rejected' || kind === 'adjustment' ? null : TARGETS[kind].key;
      const sink: CopySink = {
        table,
        client,
        stream,
        columns,
        buffer: '',
        rows: 0,
        error: undefined,
        key,
        lastKey: null,
        keysIncrease: true,
      };
      // Kept for the next flush; a pending once(stream, 'drain' | 'finish') rejects with it as well.
      stream.on('error', (error) => {
        sink.error ??= error;
      });
      this.sinks.set(kind, sink);
      return sink;
    } catch (error) {
      client.release(true);
      throw error;
    }
  }

  /** Flushes and ends every COPY; the staged rows are then visible to the merge transaction. */
  async endCopy(): Promise<void> {
    const errors: unknown[] = [];
    await Promise.all(
      [...this.sinks.values()].map(async (sink) => {
        try {
          await this.flush(sink);
          sink.stream.end();
          await once(sink.stream, 'finish');
          await sink.client?.query('commit');
          sink.client?.release();
        } catch (error) {
          errors.push(error);
          sink.client?.release(true);
        }
        sink.client = null;
      }),
    );
    if (errors.length > 0) throw errors[0];
  }

  /**
   * Keeps the last of duplicate keys and analyses the tables (after {@link endCopy}), through `query`:
   * the merging transaction's own connection, which then needs no second one.
   */
  async prepare(query: (text: string) => Promise<unknown>): Promise<void> {
    for (const sink of this.sinks.values()) {
      // A file in key order (the provider's reports usually are) cannot repeat a key: no check needed.
      if (sink.key !== null && !sink.keysIncrease) {
        const perRow = sink.columns.includes('account');
        await this.keepLastOfEachKey(query, sink.table, perRow ? ['account', sink.key] : [sink.key]);
      }
    }
    // Fresh statistics, so that the merge plans joins for the real row count (hash join for a big
    // file, index lookups for a small one) instead of the default guess for an unanalysed table.
    const tables = [...this.sinks.values()].map((s) => s.table);
    if (tables.length > 0) await query(`analyze ${tables.join(', ')}`);
  }

  /**
   * The last occurrence of a key in the file wins: earlier ones are deleted from staging, so that the
   * merge reads one row per key without sorting the staged rows. Duplicates are rare; finding them is
   * a hash aggregate over the key column alone. (Adjustments have no provider key: identical ones are
   * numbered by the merge instead.)
   */
  private async keepLastOfEachKey(
    query: (text: string) => Promise<unknown>,
    table: string,
    key: readonly string[],
  ): Promise<void> {
    const cols = key.join(', ');
    await query(`delete from ${table} s
      using (select ${cols}, max(seq) as seq from ${table} group by ${cols} having count(*) > 1) d
      where ${key.map((c) => `s.${c} = d.${c}`).join(' and ')} and s.seq < d.seq`);
  }

  /** Aborts any COPY still running and drops the staging tables. Never throws. */
  async drop(): Promise<void> {
    for (const sink of this.sinks.values()) {
      if (sink.client) {
        sink.stream.destroy();
        sink.client.release(true);
      }
    }
    const tables = [...this.sinks.values()].map((s) => s.table);
    this.sinks.clear();
    if (tables.length === 0) return;
    try {
      await this.pool.query(`drop table if exists ${tables.join(', ')}`);
    } catch {
      // A staging table left behind holds no warehouse data; the next load of this id would drop it.
    }
  }
}

/**
 * Drops the staging tables of every load that is no longer running: a load killed mid-way (SIGKILL, a
 * crash of the machine) never reached its own DROP. Called when a load starts, after the loads of dead
 * owners were marked abandoned. Never throws: staging left behind holds no warehouse data.
 */
export async function dropEndedStaging(pool: pg.Pool): Promise<void> {
  try {
    const r = await pool.query<{ name: string }>(
      `select format('%I.%I', t.schemaname, t.tablename) as name from pg_tables t
       where t.schemaname = 'recon_work' and t.tablename like '${STAGING_LIKE}%'
         and not exists (select from loads l where l.status = 'running'
           and t.tablename like '${STAGING_LIKE}' || l.load_id || '\\_%')`,
    );
    if (r.rows.length > 0) await pool.query(`drop table if exists ${r.rows.map((x) => x.name).join(', ')}`);
  } catch {
    // Another load may be dropping the same tables; the next load tries again.
  }
}
