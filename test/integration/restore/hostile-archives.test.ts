/**
 * Archives written to escape or to overwhelm a restore (issue 16): objects whose own namespace
 * disagrees with their path's, duplicate entries, side files and archives that inflate to
 * gigabytes, and `velero-backup.json` documents that are not what they claim. Each is restored
 * into its path's namespace with a warning, or refused naming the file, before anything is created.
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { backupKeys, restoreKeys } from '../../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../../shared/ports/object-store.js';
import { tempStore } from '../backup/support.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import {
  type Entry,
  putVeleroBackup,
  restoreLocally,
  tarball,
  veleroBackupDocument,
} from '../support/velero-backup.js';

const MiB = 1024 * 1024;

const namespaceEntry = (ns: string, objectName = ns): Entry => ({
  name: `resources/namespaces/cluster/${ns}.json`,
  body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: objectName } }),
});
const configMap = (metadata: Record<string, unknown>, data: Record<string, string> = {}): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata, data });

async function results(store: ObjectStore, restore: string): Promise<Record<string, unknown>> {
  const raw = await store.get(restoreKeys(restore).results);
  return JSON.parse(gunzipSync(raw ?? new Uint8Array()).toString('utf8')) as Record<string, unknown>;
}

describe('restoring an archive whose objects name another namespace than their path', () => {
  let kc: KubeConfig;
  let core: CoreV1Api;
  /** Where the hostile objects point: it exists, so a create there would succeed. */
  let victim: string;
  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    core = kc.makeApiClient(CoreV1Api);
    victim = uniqueName('victim');
    await core.createNamespace({ body: { metadata: { name: victim } } });
  });
  const inVictim = async (): Promise<string[]> =>
    (await core.listNamespacedConfigMap({ namespace: victim })).items
      .map((c) => c.metadata?.name ?? '')
      .filter((n) => n !== 'kube-root-ca.crt');

  it.each([
    ['no filter', (_: string) => ({}), (app: string) => app],
    [
      '--include-namespaces of the path',
      (app: string) => ({ includedNamespaces: [app] }),
      (app: string) => app,
    ],
    [
      'a namespace mapping',
      (app: string) => ({ namespaceMapping: { [app]: `${app}-dr` } }),
      (app: string) => `${app}-dr`,
    ],
  ])('restores the object into its path’s namespace with %s, and warns', async (_, specOf, targetOf) => {
    // Prepare
    const store = await tempStore();
    const app = uniqueName('app');
    const target = targetOf(app);
    await putVeleroBackup(store, 'escape', [
      { name: 'metadata/version', body: '1.1.0\n' },
      namespaceEntry(app),
      {
        name: `resources/configmaps/namespaces/${app}/settings.json`,
        body: configMap({ name: 'settings', namespace: victim }, { planted: 'yes' }),
      },
    ]);

    // Act
    const outcome = await restoreLocally({ kc, store, spec: { backupName: 'escape', ...specOf(app) } });

    // Assess
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', created: 2, failed: 0 } });
    expect(await inVictim()).toEqual([]);
    const restored = await core.readNamespacedConfigMap({ namespace: target, name: 'settings' });
    expect(restored.data).toEqual({ planted: 'yes' });
    expect((await results(store, outcome.name)).warnings).toEqual({
      namespaces: {
        [target]: [
          `ConfigMap settings: its metadata.namespace "${victim}" is not the namespace of its archive path ("${app}"); restored into the path's namespace`,
        ],
      },
    });
  });

  it('never creates a namespaced object from a cluster-scoped path in the namespace it names', async () => {
    // Prepare
    const store = await tempStore();
    await putVeleroBackup(store, 'escape-cluster', [
      { name: 'metadata/version', body: '1.1.0\n' },
      {
        name: 'resources/configmaps/cluster/planted.json',
        body: configMap({ name: 'planted', namespace: victim }),
      },
    ]);

    // Act
    const outcome = await restoreLocally({ kc, store, spec: { backupName: 'escape-cluster' } });

    // Assess: the object is restored (if at all) as what its path says: cluster-scoped.
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'PartiallyFailed', created: 0, failed: 1 } });
    expect(await inVictim()).toEqual([]);
  });

  it('names a restored Namespace by its path, not by the name its object gives', async () => {
    // Prepare
    const store = await tempStore();
    const app = uniqueName('app');
    await putVeleroBackup(store, 'escape-namespace', [
      { name: 'metadata/version', body: '1.1.0\n' },
      namespaceEntry(app, victim),
      {
        name: `resources/configmaps/namespaces/${app}/a.json`,
        body: configMap({ name: 'a', namespace: app }),
      },
    ]);

    // Act
    const outcome = await restoreLocally({
      kc,
      store,
      spec: { backupName: 'escape-namespace', existingResourcePolicy: 'update' },
    });

    // Assess
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', created: 2 } });
    const created = await core.readNamespace({ name: app });
    expect(created.metadata?.labels?.['velero.io/restore-name']).toBe(outcome.name);
    const untouched = await core.readNamespace({ name: victim });
    expect(untouched.metadata?.labels?.['velero.io/restore-name']).toBeUndefined();
  });
});

describe('restoring an archive with duplicate entries', () => {
  let kc: KubeConfig;
  beforeAll(() => {
    kc = kubeConfigFor(testEnv().clusters.source);
  });

  it.each([
    ['with different data', '{"changed": "yes"}'],
    ['with the same data', undefined],
  ])('refuses it as hostile (%s) and creates nothing', async (_, secondData) => {
    // Prepare
    const store = await tempStore();
    const app = uniqueName('dup');
    const first = configMap({ name: 'twice', namespace: app }, { n: '1' });
    await putVeleroBackup(store, 'duplicates', [
      { name: 'metadata/version', body: '1.1.0\n' },
      namespaceEntry(app),
      { name: `resources/configmaps/namespaces/${app}/twice.json`, body: first },
      {
        name: `./resources/configmaps/namespaces/${app}/twice.json`,
        body: secondData ? configMap({ name: 'twice', namespace: app }, JSON.parse(secondData)) : first,
      },
    ]);

    // Act
    const outcome = await restoreLocally({ kc, store, spec: { backupName: 'duplicates' } });

    // Assess
    expect(outcome).toMatchObject({ ok: false, error: 'RestoreFailed' });
    if (outcome.ok) return;
    expect(outcome.cause).toContain(
      `the backup archive is refused at entry "./resources/configmaps/namespaces/${app}/twice.json": a second entry for the same path`,
    );
    const namespaces = (await kc.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name);
    expect(namespaces).not.toContain(app);
  });
});

/** `mib` MiB of spaces (JSON whitespace) as 1 MiB gzip members: about a thousandth of the size. */
function spacesBomb(mib: number): Buffer {
  const member = gzipSync(Buffer.alloc(MiB, 0x20), { level: 9 });
  return Buffer.concat([gzipSync('['), ...Array.from({ length: mib }, () => member), gzipSync(']')]);
}

/** A ustar header of a regular file: its name and size, nothing else set. */
function ustarHeader(name: string, size: number): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 'latin1');
  header.write('0000644\0', 100, 'latin1');
  header.write('0000000\0', 108, 'latin1');
  header.write('0000000\0', 116, 'latin1');
  header.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  header.write('00000000000\0', 136, 'latin1');
  header.write('0', 156, 'latin1');
  header.write('ustar\u000000', 257, 'latin1');
  header.write('        ', 148, 'latin1');
  const sum = header.reduce((a, b) => a + b, 0);
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return header;
}

/**
 * A tar.gz of `entries` entries of `entryMiB` MiB each under `junk/` (after a valid item): data
 * that compresses only some fifty times, so no ratio check sees a bomb; built from one deflated
 * MiB, repeated as gzip members.
 */
async function lowRatioArchive(options: { ns: string; entries: number; entryMiB: number }): Promise<Buffer> {
  const block = Buffer.alloc(MiB);
  const pattern = randomBytes(8 * 1024);
  for (let at = 0; at < MiB; at += pattern.length) pattern.copy(block, at);
  const body = gzipSync(block, { level: 1 });
  const members: Buffer[] = [
    await tarball([
      { name: 'metadata/version', body: '1.1.0\n' },
      namespaceEntry(options.ns),
      {
        name: `resources/configmaps/namespaces/${options.ns}/a.json`,
        body: configMap({ name: 'a', namespace: options.ns }),
      },
    ])
      .then((gz) => gunzipSync(gz).subarray(0, -1024))
      .then((tar) => gzipSync(tar)),
  ];
  for (let i = 0; i < options.entries; i++) {
    members.push(gzipSync(ustarHeader(`junk/part-${i}.bin`, options.entryMiB * MiB)));
    for (let m = 0; m < options.entryMiB; m++) members.push(body);
  }
  members.push(gzipSync(Buffer.alloc(1024)));
  return Buffer.concat(members);
}

describe('restoring backups whose files inflate to gigabytes', () => {
  let kc: KubeConfig;
  beforeAll(() => {
    kc = kubeConfigFor(testEnv().clusters.source);
  });

  it('refuses a 3 MB volume info that inflates to 3 GB, naming the file, and creates nothing', async () => {
    // Prepare
    const store = await tempStore();
    const ns = uniqueName('bomb');
    await putVeleroBackup(store, 'bombed', [
      { name: 'metadata/version', body: '1.1.0\n' },
      namespaceEntry(ns),
      { name: `resources/configmaps/namespaces/${ns}/a.json`, body: configMap({ name: 'a', namespace: ns }) },
    ]);
    const bomb = spacesBomb(3 * 1024);
    expect(bomb.length).toBeLessThan(4 * MiB);
    await store.put(backupKeys('bombed').volumeInfo, bomb);

    // Act
    const outcome = await restoreLocally({ kc, store, spec: { backupName: 'bombed' } });

    // Assess
    expect(outcome).toMatchObject({ ok: false, error: 'RestoreFailed' });
    expect(outcome.ok ? '' : outcome.cause).toContain(
      'the volume info of backup "bombed" (backups/bombed/bombed-volumeinfo.json.gz) is refused: more than 33554432 bytes once decompressed',
    );
    const namespaces = (await kc.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name);
    expect(namespaces).not.toContain(ns);
  });

  it('refuses an archive with gigabytes of entries outside resources/ at the first one past the limit', async () => {
    // Prepare: 2 GiB of entries of 30 MiB, each under the entry limit, compressing some 50 times.
    const store = await tempStore();
    const ns = uniqueName('lowratio');
    await store.put(
      backupKeys('lowratio').contents,
      await lowRatioArchive({ ns, entries: 68, entryMiB: 30 }),
    );
    await store.put(backupKeys('lowratio').metadata, JSON.stringify(veleroBackupDocument('lowratio')));

    // Act
    const outcome = await restoreLocally({ kc, store, spec: { backupName: 'lowratio' } });

    // Assess
    expect(outcome).toMatchObject({ ok: false, error: 'RestoreFailed' });
    expect(outcome.ok ? '' : outcome.cause).toContain(
      'the backup archive is refused at entry "junk/part-0.bin": more than 16777216 bytes in entries outside resources/',
    );
    const namespaces = (await kc.makeApiClient(CoreV1Api).listNamespace()).items.map((n) => n.metadata?.name);
    expect(namespaces).not.toContain(ns);
  });
});

describe('restoring a backup whose velero-backup.json is not a Backup', () => {
  let kc: KubeConfig;
  beforeAll(() => {
    kc = kubeConfigFor(testEnv().clusters.source);
  });
  const completed = veleroBackupDocument('broken');

  it.each([
    ['text that is not JSON', 'not json {', 'is not JSON'],
    [
      'status: null',
      JSON.stringify({ ...completed, status: null }),
      "status: must be an object: the backup's status, with its phase",
    ],
    [
      'a status without phase',
      JSON.stringify({ ...completed, status: { expiration: '2026-02-01T00:00:00Z' } }),
      'status.phase: is missing: a backup says its phase',
    ],
  ])('ends FailedValidation for %s, naming the backup and the file', async (_, text, reason) => {
    // Prepare
    const store = await tempStore();
    const ns = uniqueName('broken');
    await putVeleroBackup(store, 'broken', [
      { name: 'metadata/version', body: '1.1.0\n' },
      namespaceEntry(ns),
    ]);
    await store.put(backupKeys('broken').metadata, text);

    // Act
    const outcome = await restoreLocally({ kc, store, spec: { backupName: 'broken' } });

    // Assess
    expect(outcome).toMatchObject({ ok: false, error: 'FailedValidation' });
    const cause = outcome.ok ? '' : outcome.cause;
    expect(cause).toContain(
      'restore.spec.backupName: backup "broken" cannot be restored: the velero-backup.json of backup "broken" (backups/broken/velero-backup.json)',
    );
    expect(cause).toContain(reason);
    expect(cause).not.toMatch(/SyntaxError|TypeError|reading 'phase'|is undefined/);
  });
});
