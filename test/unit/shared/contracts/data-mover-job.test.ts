import { describe, expect, it } from 'vitest';
import { parseDataMoverJob } from '../../../../shared/contracts/data-mover-job.js';

const repository = { bucket: 'backups', prefix: 'velero', kmsKeyId: 'alias/lifeboat' };
const backup = {
  kind: 'block-backup',
  jobId: 'nightly-shop-data',
  repository,
  source: { snapshotId: 'snap-0123456789abcdef0' },
};

const problemsOf = (job: unknown): string[] => {
  const parsed = parseDataMoverJob(JSON.stringify(job));
  return parsed.ok ? [] : parsed.problems.map((p) => `${p.path}: ${p.message}`);
};

describe('the data mover job', () => {
  it('accepts a block backup, a cross-account block restore with a volume, file jobs and maintenance', () => {
    const jobs = [
      backup,
      {
        kind: 'block-restore',
        jobId: 'dr-restore-shop-data',
        repository: { directory: '/var/lib/lifeboat', keyFile: '/etc/lifeboat/repository.key' },
        manifestId: 'nightly-shop-data',
        tags: { restore: 'dr-1', pvcNamespace: 'shop', pvcName: 'data' },
        target: {
          region: 'eu-west-1',
          roleArn: 'arn:aws:iam::210987654321:role/lifeboat-restore',
          externalId: 'lifeboat',
          kmsKeyArn: 'arn:aws:kms:eu-west-1:210987654321:key/1234abcd-12ab-34cd-56ef-1234567890ab',
          volume: { availabilityZone: 'eu-west-1b', volumeType: 'gp3' },
        },
      },
      { kind: 'file-backup', jobId: 'fs-1', repository, source: { path: '/mnt/volume' } },
      {
        kind: 'file-restore',
        jobId: 'fs-2',
        repository,
        manifestId: 'fs-1',
        target: { path: '/mnt/target' },
      },
      { kind: 'verify', jobId: 'v', repository },
      { kind: 'gc', jobId: 'g', repository },
      { kind: 'gc', jobId: 'g', repository, repackDeadFraction: 0.8 },
      { kind: 'gc', jobId: 'g', repository, repackDeadFraction: 1 },
    ];
    for (const job of jobs) expect(problemsOf(job), JSON.stringify(job)).toEqual([]);
  });

  it.each([
    ['an unknown kind', { ...backup, kind: 'copy' }, 'kind:'],
    ['a job id that cannot name an object', { ...backup, jobId: '../x' }, 'jobId:'],
    [
      'a snapshot id of another kind',
      { ...backup, source: { snapshotId: 'vol-1' } },
      'source.snapshotId: expected an EBS snapshot id',
    ],
    [
      'no repository location',
      { ...backup, repository: { kmsKeyId: 'alias/x' } },
      'repository.bucket: give either bucket or directory',
    ],
    [
      'two key wrappers',
      { ...backup, repository: { ...repository, keyFile: '/k' } },
      'repository.kmsKeyId: give either kmsKeyId or keyFile',
    ],
    [
      'a relative directory',
      { ...backup, repository: { directory: 'repo', keyFile: '/k' } },
      'repository.directory: expected an absolute path',
    ],
    ['concurrency 0', { ...backup, concurrency: 0 }, 'concurrency:'],
    [
      'a repack threshold of 0',
      { kind: 'gc', jobId: 'g', repository, repackDeadFraction: 0 },
      'repackDeadFraction: must be a fraction in (0, 1]',
    ],
    [
      'a repack threshold over 1',
      { kind: 'gc', jobId: 'g', repository, repackDeadFraction: 1.5 },
      'repackDeadFraction: must be a fraction in (0, 1]',
    ],
    [
      'a repack threshold for verify',
      { kind: 'verify', jobId: 'v', repository, repackDeadFraction: 0.5 },
      '(request)',
    ],
    ['an unknown field', { ...backup, sourceSnapshot: 'snap-1' }, '(request)'],
    [
      'a restore without the restore tag',
      { kind: 'block-restore', jobId: 'r', repository, manifestId: 'm', target: {} },
      'tags:',
    ],
    [
      'a volume zone that is a region',
      {
        kind: 'block-restore',
        jobId: 'r',
        repository,
        manifestId: 'm',
        tags: { restore: 'r' },
        target: { volume: { availabilityZone: 'us-east-1' } },
      },
      'target.volume.availabilityZone: expected an availability zone',
    ],
    [
      'a relative file-mode source',
      { kind: 'file-backup', jobId: 'f', repository, source: { path: 'data' } },
      'source.path: expected an absolute path',
    ],
  ])('refuses %s, naming the field', (_what, job, expected) => {
    const problems = problemsOf(job);
    expect(
      problems.some((p) => p.startsWith(expected)),
      problems.join('\n'),
    ).toBe(true);
  });

  it('refuses text that is not JSON', () => {
    const parsed = parseDataMoverJob('{"kind":');
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.problems.map((p) => p.path)).toEqual(['(job)']);
  });
});
