import { describe, expect, it } from 'vitest';
import { validateBackup } from '../../../../functions/validate-backup/validate-backup.js';
import { CountingStore } from '../support/invalid-requests.js';

const clock = { now: () => new Date('2026-01-01T00:00:00Z') };

describe('ValidateBackup on a TTL past what a Go duration holds', () => {
  it('ends FailedValidation at backup.spec.ttl, claiming no name and writing nothing', async () => {
    // Prepare: what `lifeboat backup create x --ttl 9999999999999999999h` asks for.
    const store = new CountingStore();
    const request = {
      cluster: 'prod',
      backup: { metadata: { name: 'x' }, spec: { ttl: '9999999999999999999h' } },
    };

    // Act
    const outcome = await validateBackup(
      { request, runId: 'run-1' },
      { store, clock, itemBlocksTimeoutSeconds: 60 },
    );

    // Assess
    expect(outcome).toEqual({
      valid: false,
      problems: [
        {
          path: 'backup.spec.ttl',
          message: 'must be a duration such as 720h, 1h30m or 10m0s (at most 2562047h)',
        },
      ],
      summary: 'backup.spec.ttl: must be a duration such as 720h, 1h30m or 10m0s (at most 2562047h)',
    });
    expect(store.writes).toBe(0);
  });
});
