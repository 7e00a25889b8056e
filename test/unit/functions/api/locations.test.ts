import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleApiRequest } from '../../../../functions/api/api.js';
import type { ApiDeps } from '../../../../functions/api/deps.js';
import { readOnlyLocation } from '../../../../shared/adapters/backup-location-store.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { backupDocument } from '../../../../shared/domain/storage/backup-document.js';
import type { DownloadLinks } from '../../../../shared/ports/download-links.js';
import type { Executions } from '../../../../shared/ports/executions.js';

const unused = new Proxy(
  {},
  { get: () => () => Promise.reject(new Error('not used by a location listing')) },
);

describe('listing the backups of the DR source location', () => {
  let root: string;
  let deps: ApiDeps;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'lifeboat-api-location-'));
    const source = new LocalDirectoryStore(join(root, 'source'));
    for (const name of ['nightly-20261127', 'nightly-20261128'])
      await source.put(
        `backups/${name}/velero-backup.json`,
        JSON.stringify(
          backupDocument({
            name,
            spec: { includedNamespaces: ['shop'] },
            startedAt: new Date('2026-11-27T00:00:00Z'),
            completedAt: new Date('2026-11-27T00:01:00Z'),
            expiration: new Date('2026-12-27T00:00:00Z'),
            phase: 'Completed',
          }),
        ),
      );
    deps = {
      store: new LocalDirectoryStore(join(root, 'own')),
      locations: { dr: readOnlyLocation({ store: source, name: 'dr' }) },
      executions: unused as Executions,
      links: unused as DownloadLinks,
      clusters: ['dr-cluster'],
    };
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const list = (query: Record<string, string>) =>
    handleApiRequest({ httpMethod: 'GET', path: '/backups', queryStringParameters: query } as never, deps);

  it('shows the source backups, marked with their storage location, as Velero’s backup sync does', async () => {
    const answer = await list({ location: 'dr' });
    expect(answer.statusCode).toBe(200);
    const body = JSON.parse(answer.body) as {
      items: {
        metadata: { name: string; labels: Record<string, string> };
        spec: { storageLocation: string };
      }[];
    };
    expect(body.items.map((b) => b.metadata.name)).toEqual(['nightly-20261127', 'nightly-20261128']);
    for (const item of body.items) {
      expect(item.spec.storageLocation).toBe('dr');
      expect(item.metadata.labels['velero.io/storage-location']).toBe('dr');
    }
  });

  it('keeps the deployment’s own listing to its own backups', async () => {
    const own = await handleApiRequest(
      { httpMethod: 'GET', path: '/backups', queryStringParameters: {} } as never,
      { ...deps, executions: { describe: async () => undefined } as unknown as Executions },
    );
    expect(JSON.parse(own.body)).toMatchObject({ items: [] });
  });

  it('answers 400 naming the location when the deployment has no such location', async () => {
    const answer = await list({ location: 'elsewhere' });
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      code: 'FailedValidation',
      problems: [{ path: 'location', message: expect.stringContaining('one of: dr') }],
    });
  });
});
