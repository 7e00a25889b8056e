import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  backupOperationOf,
  CSI_SNAPSHOT_ACTION,
  csiOperationStatus,
  EBS_SNAPSHOT_ACTION,
  ebsOperationStatus,
  isSettled,
  nextPollSeconds,
  type OperationStatus,
  startedStatus,
  TIMED_OUT,
  type VolumeOperationSpec,
} from '../../../../../shared/domain/volumes/operations.js';

const created = '2026-01-01T00:00:00.000Z';
const at = (seconds: number) => new Date(Date.parse(created) + seconds * 1000);
const native: VolumeOperationSpec = {
  operationId: 'snap-1',
  method: 'native',
  backupItemAction: EBS_SNAPSHOT_ACTION,
  resource: { Group: '', Resource: 'persistentvolumes', Namespace: '', Name: 'pv-1' },
  postOperationItems: [],
  createdAt: created,
};
const csi: VolumeOperationSpec = {
  operationId: `app/velero-data-1/2026-01-01T00:00:00Z`,
  method: 'csi',
  backupItemAction: CSI_SNAPSHOT_ACTION,
  resource: {
    Group: 'snapshot.storage.k8s.io',
    Resource: 'volumesnapshots',
    Namespace: 'app',
    Name: 'velero-data-1',
  },
  postOperationItems: [],
  createdAt: created,
};

describe('an EBS snapshot operation', () => {
  const previous = startedStatus(native);
  it.each([
    ['completed', { state: 'completed' as const }, 60, 'Completed', 100, undefined],
    ['pending at 40%', { state: 'pending' as const, percent: 40 }, 60, 'InProgress', 40, undefined],
    [
      'in error',
      { state: 'error' as const, stateMessage: 'KMS key disabled' },
      60,
      'Failed',
      0,
      'EBS snapshot snap-1 failed: KMS key disabled',
    ],
    [
      'still pending after itemOperationTimeout',
      { state: 'pending' as const, percent: 99 },
      3601,
      'Failed',
      99,
      `${TIMED_OUT} (itemOperationTimeout 1h0m0s)`,
    ],
    [
      'pending exactly at the timeout',
      { state: 'pending' as const, percent: 99 },
      3600,
      'InProgress',
      99,
      undefined,
    ],
  ])('%s', (_, look, seconds, phase, percent, error) => {
    const status = ebsOperationStatus({
      operation: native,
      previous,
      look,
      now: at(seconds),
      timeoutMs: 3_600_000,
    });
    expect(status.phase).toBe(phase);
    expect(status.nCompleted).toBe(percent);
    expect(status).toMatchObject({ nTotal: 100, operationUnits: '%', created: '2026-01-01T00:00:00Z' });
    expect(status.error).toBe(error);
    expect(isSettled(status)).toBe(phase !== 'InProgress');
  });

  it('keeps the last known progress when EC2 reports none', () => {
    const first = ebsOperationStatus({
      operation: native,
      previous,
      look: { state: 'pending', percent: 70 },
      now: at(5),
      timeoutMs: 60_000,
    });
    const second = ebsOperationStatus({
      operation: native,
      previous: first,
      look: { state: 'pending' },
      now: at(10),
      timeoutMs: 60_000,
    });
    expect(second.nCompleted).toBe(70);
    expect(second.updated).toBe('2026-01-01T00:00:10Z');
  });
});

describe('a CSI VolumeSnapshot operation', () => {
  const previous = startedStatus(csi);
  const ready = {
    readyToUse: true,
    snapshotHandle: 'snap-9',
    restoreSize: 1073741824,
    driver: 'ebs.csi.aws.com',
  };
  it.each<
    [
      string,
      Parameters<typeof csiOperationStatus>[0]['snapshot'],
      Parameters<typeof csiOperationStatus>[0]['content'],
      number,
      OperationStatus['phase'],
    ]
  >([
    [
      'ready with its content',
      { exists: true, readyToUse: true, boundContentName: 'vsc-1' },
      ready,
      5,
      'Completed',
    ],
    ['not bound yet', { exists: true }, undefined, 5, 'InProgress'],
    [
      'bound, content not ready',
      { exists: true, readyToUse: false, boundContentName: 'vsc-1' },
      { readyToUse: false },
      5,
      'InProgress',
    ],
    [
      'with a temporary VolumeSnapshot error (Velero retries)',
      { exists: true, error: 'driver busy' },
      undefined,
      5,
      'InProgress',
    ],
    [
      'with a content error (final)',
      { exists: true, boundContentName: 'vsc-1' },
      { error: 'snapshot failed' },
      5,
      'Failed',
    ],
    ['gone', { exists: false }, undefined, 5, 'Failed'],
    [
      'not ready after csiSnapshotTimeout',
      { exists: true, readyToUse: false, boundContentName: 'vsc-1' },
      { readyToUse: false },
      601,
      'Failed',
    ],
  ])('%s', (_, snapshot, content, seconds, phase) => {
    const status = csiOperationStatus({
      operation: csi,
      previous,
      snapshot,
      ...(content ? { content } : {}),
      now: at(seconds),
      timeoutMs: 600_000,
    });
    expect(status.phase).toBe(phase);
    if (phase === 'Failed') expect(status.error).toEqual(expect.any(String));
  });

  it('records the content name, handle, size and driver for volumes-info', () => {
    const status = csiOperationStatus({
      operation: csi,
      previous,
      snapshot: { exists: true, readyToUse: true, boundContentName: 'vsc-1', restoreSize: 1073741824 },
      content: ready,
      now: at(5),
      timeoutMs: 600_000,
    });
    expect(status.csi).toEqual({
      vscName: 'vsc-1',
      snapshotHandle: 'snap-9',
      size: 1073741824,
      driver: 'ebs.csi.aws.com',
      readyToUse: true,
    });
  });
});

describe("Velero's BackupOperation record", () => {
  it('spells the spec keys Go spells them without json tags, and leaves out empty status fields', () => {
    const status = ebsOperationStatus({
      operation: native,
      previous: startedStatus(native),
      look: { state: 'completed' },
      now: at(30),
      timeoutMs: 60_000,
    });
    const record = backupOperationOf({
      backupName: 'nightly',
      backupUID: 'run-1',
      operation: native,
      status,
    });
    expect(Object.keys(record.spec)).toEqual([
      'backupName',
      'backupUID',
      'backupItemAction',
      'ResourceIdentifier',
      'OperationID',
      'PostOperationItems',
    ]);
    expect(record.spec.ResourceIdentifier).toEqual({
      Group: '',
      Resource: 'persistentvolumes',
      Namespace: '',
      Name: 'pv-1',
    });
    expect(record.spec.PostOperationItems).toBeNull();
    expect(record.status).toEqual({
      phase: 'Completed',
      nCompleted: 100,
      nTotal: 100,
      operationUnits: '%',
      description: 'completed',
      created: '2026-01-01T00:00:00Z',
      started: '2026-01-01T00:00:00Z',
      updated: '2026-01-01T00:00:30Z',
    });
  });
});

describe('the wait between looks', () => {
  it('starts at the base, never exceeds the cap, and never shrinks as the wait grows', () => {
    fc.assert(
      fc.property(fc.nat(10_000_000), fc.nat(10_000_000), fc.integer({ min: 1, max: 30 }), (a, b, base) => {
        const [early, late] = a <= b ? [a, b] : [b, a];
        const first = nextPollSeconds({ waitedMs: early, base });
        const second = nextPollSeconds({ waitedMs: late, base });
        expect(first).toBeGreaterThanOrEqual(base);
        expect(second).toBeLessThanOrEqual(Math.max(base, 60));
        expect(second).toBeGreaterThanOrEqual(first);
      }),
    );
    expect(nextPollSeconds({ waitedMs: 0, base: 10 })).toBe(10);
  });
});
