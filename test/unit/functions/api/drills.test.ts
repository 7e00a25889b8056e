/**
 * POST /drills: a person's drill request may not claim a Schedule fired it (the report would name
 * a Schedule that did not); nothing is started for it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleApiRequest } from '../../../../functions/api/api.js';
import type { ApiDeps } from '../../../../functions/api/deps.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import type { DownloadLinks } from '../../../../shared/ports/download-links.js';
import type { Executions } from '../../../../shared/ports/executions.js';

const unused = new Proxy({}, { get: () => () => Promise.reject(new Error('not used by a refused drill')) });

describe('a drill request naming the Schedule that fired it', () => {
  let root: string;
  let deps: ApiDeps;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'lifeboat-api-drills-'));
    deps = {
      store: new LocalDirectoryStore(root),
      locations: {},
      executions: unused as Executions,
      links: unused as DownloadLinks,
      clusters: ['dr'],
    };
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('is refused with 400 naming firedBySchedule', async () => {
    const body = {
      cluster: 'dr',
      drill: { metadata: { name: 'pretend' }, spec: { backupName: 'nightly-1' } },
      firedBySchedule: 'weekly',
    };
    const answer = await handleApiRequest(
      { httpMethod: 'POST', path: '/drills', body: JSON.stringify(body) } as never,
      deps,
    );
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      problems: [{ path: 'firedBySchedule', message: "is set only by a Schedule's drill target" }],
    });
  });
});
