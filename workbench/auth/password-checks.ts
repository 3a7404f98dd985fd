/**
 * A bound on the password checks running at once. Each check is a scrypt of 32 MiB and 50-140 ms of
 * one core: unbounded, twenty sign-ins at once take every core and libuv thread from the requests of
 * people already signed in. Checks beyond the bound wait their turn in order; beyond a queue of
 * `maxWaiting` the sign-in is refused at once (the route answers 503 with Retry-After).
 */
import { availableParallelism } from 'node:os';

export interface PasswordChecks {
  /** Runs `check` when a slot is free; throws {@link PasswordChecksBusy} when the queue is full. */
  run<T>(check: () => Promise<T>): Promise<T>;
}

export class PasswordChecksBusy extends Error {}

/** Half the cores (at least one): the other half keeps serving the signed-in. */
export function defaultPasswordCheckLimit(): number {
  return Math.max(1, Math.floor(availableParallelism() / 2));
}

export function createPasswordChecks(limit = defaultPasswordCheckLimit(), maxWaiting = 100): PasswordChecks {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  return {
    async run(check) {
      if (running >= limit) {
        if (waiting.length >= maxWaiting)
          throw new PasswordChecksBusy('too many sign-ins at once: try again in a few seconds');
        // The slot is handed over by release(): `running` stays as it is.
        await new Promise<void>((resolve) => waiting.push(resolve));
      } else {
        running++;
      }
      try {
        return await check();
      } finally {
        release();
      }
    },
  };
}
