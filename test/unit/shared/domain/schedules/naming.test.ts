import { describe, expect, it } from 'vitest';
import {
  SCHEDULE_NAME_LABEL,
  scheduledBackupMeta,
  scheduledBackupName,
} from '../../../../../shared/domain/schedules/naming.js';

describe('scheduled backups are named and labelled as Velero names them', () => {
  it('names a backup <schedule>-<yyyyMMddHHmmss> in UTC', () => {
    expect(scheduledBackupName('nightly', new Date('2026-03-08T07:04:05.999Z'))).toBe(
      'nightly-20260308070405',
    );
    expect(scheduledBackupName('n', new Date('2026-12-31T23:59:59+02:00'))).toBe('n-20261231215959');
  });

  it("labels it with the schedule's name; template labels win over the schedule's", () => {
    const meta = scheduledBackupMeta({
      schedule: {
        name: 'nightly',
        namespace: 'velero',
        labels: { team: 'a', tier: 'x' },
        annotations: { note: 'hi' },
      },
      templateLabels: { tier: 'gold' },
      at: new Date('2026-01-02T03:04:05Z'),
    });
    expect(meta).toEqual({
      name: 'nightly-20260102030405',
      namespace: 'velero',
      labels: { team: 'a', tier: 'gold', [SCHEDULE_NAME_LABEL]: 'nightly' },
      annotations: { note: 'hi' },
    });
  });
});
