import { describe, expect, it } from 'vitest';
import {
  drillSummary,
  finishedReport,
  humanDuration,
  recoveryPointSeconds,
} from '../../../../../shared/domain/drills/report.js';

const started = {
  name: 'd',
  cluster: 'dr',
  backup: { name: 'b', startedAt: '2026-11-27T00:00:00Z' },
  restore: { name: 'd', phase: 'Completed' },
  namespaceMapping: { shop: 'shop-dr' },
  startedAt: '2026-11-27T02:00:00Z',
};
const base = {
  started,
  rpoSeconds: 7200,
  items: { checked: 10, notChecked: 3, waitedOn: 2 },
  mismatches: [],
  volumes: [{ pvc: 'db/data', method: 'NativeSnapshot', source: 'snap-1' }],
  waited: true,
  completedAt: '2026-11-27T02:01:05Z',
};

describe("a drill's report", () => {
  it("measures RPO from the backup's start to the drill's", () => {
    expect(
      recoveryPointSeconds({
        backupStartedAt: '2026-11-27T00:00:00Z',
        drillStartedAt: '2026-11-27T02:00:30Z',
      }),
    ).toBe(7230);
  });

  it("completes with RTO from the drill's start to everything ready", () => {
    const report = finishedReport({ ...base, readyAt: '2026-11-27T02:01:01.600Z' });
    expect(report).toMatchObject({ phase: 'Completed', rtoSeconds: 62, rpoSeconds: 7200 });
    expect(report.failureReason).toBeUndefined();
  });

  it.each([
    [{ mismatches: [{ item: 'v1/Secret a/s', problem: 'missing' as const, detail: 'x' }] }, '1 mismatch'],
    [{ readyAt: undefined }, 'not everything was ready in time'],
    [
      { started: { ...started, restore: { name: 'd', phase: 'PartiallyFailed' } } },
      'restore d ended PartiallyFailed',
    ],
    [{ checkFailure: 'RetryableError: down' }, "the drill's checks failed: RetryableError: down"],
  ])('fails when %j', (change, reason) => {
    const report = finishedReport({ ...base, readyAt: '2026-11-27T02:01:00Z', ...change });
    expect(report.phase).toBe('Failed');
    expect(report.failureReason).toContain(reason);
  });

  it('does not blame readiness when the restore failed before anything was waited on', () => {
    const report = finishedReport({
      ...base,
      waited: false,
      started: { ...started, restore: { name: 'd', phase: 'Failed', failure: 'FailedValidation: x' } },
    });
    expect(report.failureReason).toBe('restore d ended Failed: FailedValidation: x');
    expect(report.rtoSeconds).toBeUndefined();
  });

  it('reads as a summary with every mismatch and volume', () => {
    const report = finishedReport({
      ...base,
      readyAt: '2026-11-27T02:01:00Z',
      mismatches: [{ item: 'v1/ConfigMap shop-dr/c', problem: 'different', detail: 'differs in data.a' }],
    });
    const text = drillSummary(report).join('\n');
    expect(text).toContain('RPO:        2h 0m 0s');
    expect(text).toContain('RTO:        1m 0s');
    expect(text).toContain('    v1/ConfigMap shop-dr/c: different (differs in data.a)');
    expect(text).toContain('    db/data: NativeSnapshot from snap-1');
    expect(text).toContain('namespaces shop→shop-dr');
  });

  it.each([
    [0, '0s'],
    [59, '59s'],
    [61, '1m 1s'],
    [3600, '1h 0m 0s'],
  ])('writes %i seconds as %s', (s, text) => {
    expect(humanDuration(s)).toBe(text);
  });
});
