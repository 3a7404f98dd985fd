import { readFileSync } from 'node:fs';

/**
 * Where a process's wall time went, from Linux's scheduler statistics (`/proc/<pid>/schedstat`: the
 * time its main thread ran on a CPU, and the time it was ready to run but waited for one): on a CPU,
 * waiting for a CPU (the machine's other work), and the rest asleep (waiting for its peer, the disk
 * or a lock). A load overlaps Node and the server well when the server's backend is hardly ever
 * asleep: each second it sleeps, it waits for Node (docs/benchmark-record.md §3, the overlap).
 */
export interface ScheduleSplit {
  readonly seconds: number;
  readonly cpu: number;
  readonly waitingForCpu: number;
  readonly asleep: number;
}

interface Seen {
  readonly first: readonly number[];
  last: readonly number[];
  readonly t0: number;
  t1: number;
}

const SAMPLE_MS = 20;

function schedstat(pid: number | string): number[] | null {
  try {
    return readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
  } catch {
    return null;
  }
}

/** The postmaster's children now (Linux's `children` file of its main thread). */
function childrenOf(pid: string): string[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean);
  } catch {
    return [];
  }
}

function split(s: Seen): ScheduleSplit {
  const seconds = (s.t1 - s.t0) / 1000;
  const cpu = (s.last[0]! - s.first[0]!) / 1e9;
  const waitingForCpu = (s.last[1]! - s.first[1]!) / 1e9;
  return { seconds, cpu, waitingForCpu, asleep: Math.max(0, seconds - cpu - waitingForCpu) };
}

/**
 * Watches, every 20 ms until {@link stop}, the server's backends (the children of `postmaster`) and
 * the processes {@link watch}ed; a process is measured from when it is first seen to its last sample
 * (at most 20 ms short at each end). Linux only: elsewhere every figure is null.
 */
export class ScheduleWatch {
  private readonly seen = new Map<string, Seen>();
  private readonly extra = new Set<string>();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly postmaster: string;

  constructor(postmaster: number | string) {
    this.postmaster = String(postmaster);
    if (schedstat(this.postmaster) === null) return;
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  /** Watch `pid` too (the loader's process). */
  watch(pid: number | undefined): void {
    if (pid !== undefined) this.extra.add(String(pid));
  }

  /**
   * Stops, and returns the split of `pid` (when watched) and of the backend that ran the longest on a
   * CPU meanwhile (the load's transaction, or the `\copy`'s backend).
   */
  stop(pid?: number): { process: ScheduleSplit | null; backend: ScheduleSplit | null } {
    if (this.timer) clearInterval(this.timer);
    const backends = [...this.seen].filter(([p]) => !this.extra.has(p)).map(([, s]) => split(s));
    const backend = backends.sort((a, b) => b.cpu - a.cpu)[0] ?? null;
    const own = pid === undefined ? undefined : this.seen.get(String(pid));
    return { process: own ? split(own) : null, backend };
  }

  private sample(): void {
    const now = Date.now();
    for (const pid of new Set([...this.seen.keys(), ...this.extra, ...childrenOf(this.postmaster)])) {
      const stat = schedstat(pid);
      if (stat === null) continue;
      const s = this.seen.get(pid);
      if (s) {
        s.last = stat;
        s.t1 = now;
      } else this.seen.set(pid, { first: stat, last: stat, t0: now, t1: now });
    }
  }
}
