import { describe, expect, it } from 'vitest';
import { heartbeatIntervalMs } from '../../../activities/heartbeat-interval.ts';
import {
  activityTuningProblem,
  pullSourceOptions,
  reconcileWindowOptions,
  tunedActivityOptions,
} from '../../../workflows/activity-options.ts';

describe('activity tuning from the workflow input', () => {
  it('leaves the production presets untouched when absent', () => {
    expect(tunedActivityOptions(pullSourceOptions, undefined)).toBe(pullSourceOptions);
    expect(tunedActivityOptions(reconcileWindowOptions, {})).toBe(reconcileWindowOptions);
    expect(pullSourceOptions.heartbeatTimeout).toBe('30 seconds');
    expect(reconcileWindowOptions.heartbeatTimeout).toBe('2 minutes');
  });

  it('overrides only the heartbeat timeout', () => {
    expect(tunedActivityOptions(pullSourceOptions, { heartbeatTimeoutSeconds: 3 })).toEqual({
      ...pullSourceOptions,
      heartbeatTimeout: '3 seconds',
    });
    expect(pullSourceOptions.heartbeatTimeout).toBe('30 seconds');
  });

  it('accepts whole seconds from 1 to 3600 and names anything else', () => {
    expect(activityTuningProblem(undefined)).toBeNull();
    expect(activityTuningProblem({})).toBeNull();
    expect(activityTuningProblem({ heartbeatTimeoutSeconds: 1 })).toBeNull();
    expect(activityTuningProblem({ heartbeatTimeoutSeconds: 3600 })).toBeNull();
    for (const bad of [0, -5, 2.5, 3601, Number.NaN]) {
      expect(activityTuningProblem({ heartbeatTimeoutSeconds: bad })).toBe(
        `activityTuning.heartbeatTimeoutSeconds ${JSON.stringify(bad)} is not valid: use a whole number of seconds from 1 to 3600`,
      );
    }
  });
});

describe('heartbeat interval of an activity', () => {
  it('is every 5 s by default, at most a third of the heartbeat timeout', () => {
    expect(heartbeatIntervalMs(undefined, undefined)).toBe(5000);
    expect(heartbeatIntervalMs(undefined, 30_000)).toBe(5000);
    expect(heartbeatIntervalMs(undefined, 120_000)).toBe(5000);
    expect(heartbeatIntervalMs(undefined, 3000)).toBe(1000);
    expect(heartbeatIntervalMs(0.2, 3000)).toBe(200);
    expect(heartbeatIntervalMs(undefined, 200)).toBe(100);
  });
});
