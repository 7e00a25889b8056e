import { describe, expect, it } from 'vitest';
import { parseDataMoverJob } from '../../../../shared/contracts/data-mover-job.js';

const repository = { bucket: 'source-backups', prefix: 'velero', region: 'us-east-1', kmsKeyId: 'alias/lb' };
const work = { bucket: 'dr-backups', prefix: 'velero', region: 'us-west-2' };
const restore = {
  kind: 'file-restore',
  jobId: 'dr-1-shop-data',
  repository,
  work,
  manifestId: 'fs-1',
  target: { path: '/mnt/volume' },
};

const problemsOf = (job: unknown): string[] => {
  const parsed = parseDataMoverJob(JSON.stringify(job));
  return parsed.ok ? [] : parsed.problems.map((p) => `${p.path}: ${p.message}`);
};

describe('a data mover job keeping its working data apart from its repository', () => {
  it('accepts a separate work location on restore and verify jobs', () => {
    // Act
    const parsed = parseDataMoverJob(JSON.stringify(restore));

    // Assess
    expect(parsed).toMatchObject({ ok: true, job: { work } });
    expect(
      problemsOf({ kind: 'verify', jobId: 'v-1', repository, work: { directory: '/var/work' } }),
    ).toEqual([]);
  });

  it('refuses it on jobs that write their repository, naming the field', () => {
    // Act
    const problems = problemsOf({ kind: 'gc', jobId: 'gc-1', repository, work });

    // Assess
    expect(problems).toEqual([expect.stringMatching(/^work: a gc job writes its repository/)]);
  });

  it('refuses a work location that is neither a bucket nor a directory, or both', () => {
    // Act, Assess
    expect(problemsOf({ ...restore, work: { prefix: 'velero' } })).toEqual([
      'work.bucket: give either bucket or directory',
    ]);
    expect(problemsOf({ ...restore, work: { directory: '/w', region: 'us-east-1' } })).toEqual([
      'work.directory: a directory takes no prefix or region',
    ]);
  });
});
