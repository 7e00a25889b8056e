import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { manifestIdSchema } from '../../../../../shared/contracts/repository.js';
import {
  manifestIdsOfBackup,
  manifestStamp,
  movedByLifeboat,
  movedManifestId,
  parentManifestOf,
  parseMovedManifestId,
  snapshotToMove,
  volumeKeyOf,
} from '../../../../../shared/domain/volumes/data-movement.js';

const id = (backupName: string, volumeKey: string, at: string): string =>
  movedManifestId({ backupName, volumeKey, at });

describe('manifest ids of moved volumes', () => {
  it('say backup, volume and time, sortable by time', () => {
    expect(id('nightly-20260102', 'vol-0abc', '2026-01-02T03:04:05.678Z')).toBe(
      'nightly-20260102_vol-0abc_20260102T030405Z',
    );
    expect(manifestStamp('2026-01-02T03:04:05Z') < manifestStamp('2026-01-02T03:04:06Z')).toBe(true);
    expect(parseMovedManifestId('nightly-20260102_vol-0abc_20260102T030405Z')).toEqual({
      backupName: 'nightly-20260102',
      volumeKey: 'vol-0abc',
      stamp: '20260102T030405Z',
    });
    expect(parseMovedManifestId('restore-1_restore_0123456789abcdef')).toBeUndefined();
  });

  it('are valid manifest ids and parse back, for any backup name and PV name', () => {
    const dns = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/);
    const pvName = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/);
    fc.assert(
      fc.property(
        dns,
        pvName,
        fc.date({ min: new Date(2000, 0), max: new Date(2099, 0), noInvalidDate: true }),
        (backup, pv, at) => {
          const volumeKey = volumeKeyOf({ pvName: pv }, { backupName: backup });
          const made = id(backup, volumeKey, at.toISOString());
          expect(manifestIdSchema.safeParse(made).success).toBe(true);
          expect(parseMovedManifestId(made)).toEqual({
            backupName: backup,
            volumeKey,
            stamp: manifestStamp(at.toISOString()),
          });
        },
      ),
    );
  });

  it('shorten a long PV name with a digest, so two long names stay apart', () => {
    const long = (tail: string) => `pvc-${'x'.repeat(200)}${tail}`;
    const a = volumeKeyOf({ pvName: long('a') }, { backupName: 'b' });
    const b = volumeKeyOf({ pvName: long('b') }, { backupName: 'b' });
    expect(a).not.toBe(b);
    expect(id('b', a, '2026-01-01T00:00:00Z').length).toBeLessThanOrEqual(200);
    expect(volumeKeyOf({ pvName: 'pvc-1' }, { backupName: 'b' })).toBe('pv.pvc-1');
    expect(volumeKeyOf({ ebsVolumeId: 'vol-1' }, { backupName: 'b' })).toBe('vol-1');
  });
});

describe('the parent of an incremental', () => {
  const ids = [
    id('mon', 'vol-1', '2026-01-05T00:00:00Z'),
    id('tue', 'vol-1', '2026-01-06T00:00:00Z'),
    id('tue', 'vol-2', '2026-01-06T00:00:00Z'),
    id('thu', 'vol-1', '2026-01-08T00:00:00Z'),
    'not-a-backup-manifest',
  ];

  it('is the newest earlier manifest of the same volume', () => {
    expect(parentManifestOf({ manifestIds: ids, own: id('wed', 'vol-1', '2026-01-07T00:00:00Z') })).toBe(
      id('tue', 'vol-1', '2026-01-06T00:00:00Z'),
    );
    expect(parentManifestOf({ manifestIds: ids, own: id('fri', 'vol-2', '2026-01-09T00:00:00Z') })).toBe(
      id('tue', 'vol-2', '2026-01-06T00:00:00Z'),
    );
  });

  it('is none for a first backup of a volume, and never the manifest itself', () => {
    expect(
      parentManifestOf({ manifestIds: ids, own: id('x', 'vol-3', '2026-01-07T00:00:00Z') }),
    ).toBeUndefined();
    const own = id('mon', 'vol-1', '2026-01-05T00:00:00Z');
    expect(parentManifestOf({ manifestIds: ids, own })).toBeUndefined();
  });

  it('finds every manifest of a backup by name, and no other backup’s', () => {
    expect(manifestIdsOfBackup({ manifestIds: ids, backupName: 'tue' })).toEqual([ids[1], ids[2]]);
    expect(
      manifestIdsOfBackup({ manifestIds: [id('tue-2', 'vol-1', '2026-01-06T00:00:00Z')], backupName: 'tue' }),
    ).toEqual([]);
  });
});

describe('the snapshot a movement reads', () => {
  const native = { method: 'native' as const, operationId: 'snap-0123abcd' };
  const csi = { method: 'csi' as const, operationId: 'ns/vs/2026-01-01T00:00:00Z' };

  it('is a native snapshot’s id, or an EBS CSI snapshot’s handle, once completed', () => {
    expect(snapshotToMove({ operation: native, status: { phase: 'Completed' } })).toEqual({
      snapshotId: 'snap-0123abcd',
    });
    expect(
      snapshotToMove({
        operation: csi,
        status: { phase: 'Completed', csi: { snapshotHandle: 'snap-0fed' } },
      }),
    ).toEqual({ snapshotId: 'snap-0fed' });
  });

  it('is refused, saying why, otherwise', () => {
    expect(snapshotToMove({ operation: native, status: { phase: 'Failed' } })).toEqual({
      refused: 'its snapshot did not complete',
    });
    expect(
      snapshotToMove({ operation: csi, status: { phase: 'Completed', csi: { snapshotHandle: 'fs-1::x' } } }),
    ).toEqual({
      refused: 'its snapshot handle fs-1::x is not an EBS snapshot id, which the data mover reads',
    });
    expect(snapshotToMove({ operation: csi, status: { phase: 'Completed' } })).toEqual({
      refused: 'its CSI snapshot recorded no snapshot handle',
    });
  });
});

describe('moved by Lifeboat', () => {
  const base = { snapshotDataMoved: true, preserveLocalSnapshot: false, skipped: false };
  const info = (dataMover: string) => ({
    ...base,
    snapshotDataMovementInfo: {
      dataMover,
      uploaderType: 'x',
      snapshotHandle: 'h',
      operationID: 'o',
      size: 1,
      Phase: 'Completed',
    },
  });
  it('is only what Lifeboat’s data mover moved', () => {
    expect(movedByLifeboat(info('lifeboat'))).toBe(true);
    expect(movedByLifeboat(info('velero'))).toBe(false);
    expect(movedByLifeboat({ ...info('lifeboat'), snapshotDataMoved: false })).toBe(false);
  });
});
