import { describe, expect, it } from 'vitest';
import { parseScheduleRequest, retentionOf } from '../../../../shared/contracts/schedule.js';
import { ValidationFailed } from '../../../../shared/domain/errors.js';

const request = (schedule: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  cluster: 'prod',
  schedule: {
    apiVersion: 'velero.io/v1',
    kind: 'Schedule',
    metadata: { name: 'nightly', ...((schedule.metadata as object) ?? {}) },
    spec: { schedule: '0 3 * * *', ...((schedule.spec as object) ?? {}) },
  },
  ...extra,
});

function problemsOf(input: unknown): readonly { path: string; message: string }[] {
  try {
    parseScheduleRequest(input);
  } catch (error) {
    if (error instanceof ValidationFailed) return error.problems;
    throw error;
  }
  return [];
}

describe('parseScheduleRequest accepts a Velero Schedule and names every bad field', () => {
  it('accepts a Velero Schedule with a backup template and the optional fields', () => {
    const parsed = parseScheduleRequest(
      request({
        spec: {
          schedule: 'CRON_TZ=Europe/Paris @daily',
          template: { includedNamespaces: ['shop'], ttl: '48h', metadata: { labels: { tier: 'gold' } } },
          paused: true,
          skipImmediately: true,
          useOwnerReferencesInBackup: false,
        },
      }),
    );
    expect(parsed.schedule.spec.template.includedNamespaces).toEqual(['shop']);
    expect(parsed.schedule.spec.paused).toBe(true);
  });

  it('names the schedule field when the cron is invalid', () => {
    expect(problemsOf(request({ spec: { schedule: '0 0 * * 8' } }))).toEqual([
      {
        path: 'schedule.spec.schedule',
        message: 'invalid schedule "0 0 * * 8": day of week: 8 is outside 0-6',
      },
    ]);
  });

  it('checks the template as a backup request is checked, under spec.template', () => {
    const problems = problemsOf(
      request({
        spec: { template: { includedNamespaces: ['a'], excludedNamespaces: ['a'], ttl: 'forever' } },
      }),
    );
    expect(problems.map((p) => p.path)).toEqual(['schedule.spec.template.ttl']);
    const cross = problemsOf(
      request({ spec: { template: { includedNamespaces: ['a'], excludedNamespaces: ['a'] } } }),
    );
    expect(cross).toEqual([
      { path: 'schedule.spec.template.includedNamespaces[0]', message: '"a" is also excluded' },
    ]);
  });

  it('refuses unknown spec fields, a missing cluster and a name too long for a label value', () => {
    expect(problemsOf(request({ spec: { scheduel: 'x' } })).map((p) => p.path)).toContain('schedule.spec');
    expect(problemsOf({ schedule: request({}).schedule }).map((p) => p.path)).toEqual(['cluster']);
    expect(problemsOf(request({ metadata: { name: 'x'.repeat(64) } })).map((p) => p.path)).toEqual([
      'schedule.metadata.name',
    ]);
  });

  it('reads and checks the retention annotation', () => {
    const ok = parseScheduleRequest(
      request({ metadata: { annotations: { 'lifeboat.io/retention': '{"keepLast":3,"daily":7}' } } }),
    );
    expect(retentionOf(ok.schedule)).toEqual({ ok: true, value: { keepLast: 3, daily: 7 } });
    expect(
      problemsOf(request({ metadata: { annotations: { 'lifeboat.io/retention': '{"keepLast":-1}' } } })),
    ).toEqual([
      {
        path: 'schedule.metadata.annotations["lifeboat.io/retention"].keepLast',
        message: expect.stringContaining('>=0'),
      },
    ]);
    expect(
      problemsOf(request({ metadata: { annotations: { 'lifeboat.io/retention': 'seven' } } }))[0]?.message,
    ).toContain('must be a JSON object');
  });
});
