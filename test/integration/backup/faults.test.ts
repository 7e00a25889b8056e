import { gunzipSync } from 'node:zlib';
import type { KubeConfig } from '@kubernetes/client-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseItemBlockMessage } from '../../../shared/contracts/item-block-wire.js';
import { backupKeys } from '../../../shared/domain/storage/keys.js';
import { installSampleApp, type SampleApp } from '../../fixtures/sample-app.js';
import { readArchive } from '../support/archive.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { backup, backupRequest, tempStore } from './support.js';

/** Small pages and messages, so a backup of the sample app spans several messages. */
const SMALL = { pageSize: 3, maxMessageBytes: 4_000 };
const messageIdOf = (body: string): string => parseItemBlockMessage(body).messageId;

describe('backups under faults', () => {
  let kc: KubeConfig;
  let app: SampleApp;
  let spec: Record<string, unknown>;
  beforeAll(async () => {
    kc = kubeConfigFor(testEnv().clusters.source);
    app = await installSampleApp(kc, uniqueName('f'));
    // Objects no controller changes between two runs, so archives can be compared byte for byte.
    spec = {
      includedNamespaces: Object.values(app.namespaces),
      includedResources: [
        'configmaps',
        'secrets',
        'services',
        'deployments',
        `widgets.${app.crd.group}`,
        'namespaces',
      ],
    };
  });

  it('retries a worker that fails mid-message, and the archive equals a fault-free run', async () => {
    const clean = await tempStore();
    const cleanName = uniqueName('clean');
    expect(
      await backup({ kc, store: clean, request: backupRequest(cleanName, spec), extra: SMALL }),
    ).toMatchObject({ ok: true });

    const faulty = await tempStore();
    const faultyName = uniqueName('faulty');
    const failed: string[] = [];
    const outcome = await backup({
      kc,
      store: faulty,
      request: backupRequest(faultyName, spec),
      extra: {
        ...SMALL,
        wrapWorker: (worker) => async (body) => {
          const id = messageIdOf(body);
          if (id.endsWith('-0000002') && !failed.includes(id)) {
            failed.push(id);
            throw new Error('worker killed mid-message');
          }
          await worker(body);
        },
      },
    });
    expect(failed).toHaveLength(1);
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'Completed', errors: 0 } });
    const a = await readArchive(clean, backupKeys(cleanName).contents);
    const b = await readArchive(faulty, backupKeys(faultyName).contents);
    expect(a.names.length).toBeGreaterThan(20);
    expect(b.names).toEqual(a.names);
    expect(b.contents).toEqual(a.contents);
  });

  it('sends a poison message to the dead-letter queue and ends PartiallyFailed naming its items', async () => {
    const store = await tempStore();
    const name = uniqueName('poison');
    let poisoned: string[] = [];
    const outcome = await backup({
      kc,
      store,
      request: backupRequest(name, spec),
      extra: {
        ...SMALL,
        maxReceiveCount: 2,
        wrapWorker: (worker) => async (body) => {
          if (messageIdOf(body).endsWith('-0000001')) {
            const message = parseItemBlockMessage(body);
            poisoned = message.blocks.flatMap((b) =>
              ('items' in b ? b.items : []).map((i) =>
                i.ref.namespace ? `namespaces/${i.ref.namespace}/${i.ref.name}` : `cluster/${i.ref.name}`,
              ),
            );
            throw new Error('poison');
          }
          await worker(body);
        },
      },
    });
    expect(outcome).toMatchObject({ ok: true, output: { phase: 'PartiallyFailed' } });
    expect(poisoned.length).toBeGreaterThan(0);
    const results = JSON.parse(
      gunzipSync((await store.get(backupKeys(name).results)) ?? new Uint8Array()).toString(),
    ) as {
      errors: { velero: string[] };
    };
    const text = results.errors.velero.join('\n');
    // The local queue knows why the last delivery failed, and says so.
    expect(text).toContain('(last error: Error: poison)');
    for (const item of poisoned)
      expect(text).toContain(
        item
          .split('/')
          .slice(-2)
          .join('/')
          .replace(/^cluster\//, ''),
      );
    const document = JSON.parse(
      Buffer.from((await store.get(backupKeys(name).metadata)) ?? []).toString(),
    ) as {
      status: { phase: string; errors: number };
    };
    expect(document.status.phase).toBe('PartiallyFailed');
    expect(document.status.errors).toBeGreaterThan(0);
    const archive = await readArchive(store, backupKeys(name).contents);
    for (const item of poisoned)
      expect(
        archive.names.some((n) => n.endsWith(`/${item}.json`)),
        item,
      ).toBe(false);
  });

  it('ends FailedValidation listing every bad field, writing nothing', async () => {
    const store = await tempStore();
    const outcome = await backup({
      kc,
      store,
      request: {
        cluster: 'source',
        backup: {
          metadata: { name: 'Not_A_Name' },
          spec: {
            includedResources: ['pods'],
            includedNamespaceScopedResources: ['pods'],
            labelSelector: { matchLabels: { a: 'b' } },
            orLabelSelectors: [{ matchLabels: { c: 'd' } }],
            ttl: 'forever',
            includedNamespaces: [''],
            snapshotVolumes: 'yes',
            unknownField: 1,
          },
        },
      },
    });
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.error).toBe('FailedValidation');
    for (const path of [
      'backup.metadata.name',
      'backup.spec.ttl',
      'backup.spec.includedNamespaces[0]',
      'backup.spec.snapshotVolumes',
      'backup.spec',
    ]) {
      expect(outcome.cause).toContain(`${path}:`);
    }
    expect(outcome.cause).toContain('unknownField');
    expect(outcome.cause).not.toMatch(/\bat .*\.ts:\d+/);
    expect(await store.list('')).toEqual([]);

    const crossField = await backup({
      kc,
      store,
      request: backupRequest('cross-field', {
        includedResources: ['pods'],
        includedNamespaceScopedResources: ['pods'],
        labelSelector: { matchLabels: { a: 'b' } },
        orLabelSelectors: [{ matchLabels: { c: 'd' } }],
      }),
    });
    expect(crossField).toMatchObject({ ok: false, error: 'FailedValidation' });
    if (crossField.ok) return;
    expect(crossField.cause).toContain('backup.spec.includedNamespaceScopedResources:');
    expect(crossField.cause).toContain('backup.spec.orLabelSelectors:');
    expect(await store.list('backups/')).toEqual([]);
  });

  it('fails a backup whose ItemBlocks do not finish in time, with the reason, instead of hanging', async () => {
    const store = await tempStore();
    const name = uniqueName('stuck');
    const started = Date.now();
    const outcome = await backup({
      kc,
      store,
      request: backupRequest(name, spec),
      extra: {
        ...SMALL,
        itemBlocksTimeoutSeconds: 2,
        wrapWorker: (worker) => async (body) => {
          if (messageIdOf(body).endsWith('-0000001')) await new Promise((r) => setTimeout(r, 6_000));
          await worker(body);
        },
      },
    });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(outcome).toMatchObject({ ok: false, error: 'BackupFailed' });
    if (outcome.ok) return;
    expect(outcome.cause).toContain('States.Timeout');
    const document = JSON.parse(
      Buffer.from((await store.get(backupKeys(name).metadata)) ?? []).toString(),
    ) as {
      status: { phase: string; failureReason: string };
    };
    expect(document.status.phase).toBe('Failed');
    expect(document.status.failureReason).toContain('States.Timeout');
    expect(await store.exists(backupKeys(name).contents)).toBe(false);
  });
});
