import { describe, expect, it } from 'vitest';
import {
  chooseSnapshotClass,
  type SnapshotClassFacts,
} from '../../../../../shared/domain/volumes/csi-snapshot-class.js';

const driver = 'ebs.csi.aws.com';
const cls = (name: string, extra: Partial<SnapshotClassFacts> = {}): SnapshotClassFacts => ({
  name,
  driver,
  ...extra,
});

describe('the VolumeSnapshotClass of a CSI snapshot, chosen as Velero chooses it', () => {
  it.each<[string, Parameters<typeof chooseSnapshotClass>[0], string | RegExp]>([
    [
      'the only class of the driver',
      { driver, classes: [cls('only'), cls('other', { driver: 'x' })] },
      'only',
    ],
    [
      'the class labelled velero.io/csi-volumesnapshot-class over the default one',
      {
        driver,
        classes: [
          cls('default', { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } }),
          cls('labelled', { labels: { 'velero.io/csi-volumesnapshot-class': 'true' } }),
        ],
      },
      'labelled',
    ],
    [
      'the default class when none is labelled',
      {
        driver,
        classes: [
          cls('a'),
          cls('default', { annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } }),
        ],
      },
      'default',
    ],
    [
      "the PVC's annotation over the labels",
      {
        driver,
        classes: [cls('labelled', { labels: { 'velero.io/csi-volumesnapshot-class': 'true' } }), cls('gold')],
        pvcAnnotations: { 'velero.io/csi-volumesnapshot-class': 'gold' },
      },
      'gold',
    ],
    [
      "the backup's annotation for the driver over the PVC's",
      {
        driver,
        classes: [cls('gold'), cls('silver')],
        backupAnnotations: { 'velero.io/csi-volumesnapshot-class_ebs.csi.aws.com': 'silver' },
        pvcAnnotations: { 'velero.io/csi-volumesnapshot-class': 'gold' },
      },
      'silver',
    ],
    [
      'refused: two unlabelled classes',
      { driver, classes: [cls('a'), cls('b')] },
      /failed to get VolumeSnapshotClass for provisioner ebs.csi.aws.com/,
    ],
    [
      'refused: no class of the driver',
      { driver, classes: [cls('x', { driver: 'other' })] },
      /failed to get VolumeSnapshotClass/,
    ],
    [
      'refused: an annotation naming a class of another driver',
      {
        driver,
        classes: [cls('x', { driver: 'other' })],
        pvcAnnotations: { 'velero.io/csi-volumesnapshot-class': 'x' },
      },
      /Incorrect VolumeSnapshotClass x is not for driver ebs.csi.aws.com/,
    ],
    [
      'refused: an annotation naming a missing class',
      {
        driver,
        classes: [cls('a')],
        backupAnnotations: { 'velero.io/csi-volumesnapshot-class_ebs.csi.aws.com': 'nope' },
      },
      /No CSI VolumeSnapshotClass found with name nope/,
    ],
  ])('%s', (_, options, expected) => {
    const choice = chooseSnapshotClass(options);
    if (typeof expected === 'string') expect(choice).toEqual({ ok: true, className: expected });
    else expect(choice).toEqual({ ok: false, reason: expect.stringMatching(expected) });
  });
});
