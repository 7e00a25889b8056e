/**
 * `lifeboat backup create --from-schedule S --local`, run in-process as the command runs: a
 * backup now from the Schedule's template, against the local cluster, named and labelled as the
 * Schedule's firing at that second, written to the directory; NAME or a template flag beside
 * --from-schedule, or a schedule the directory does not hold, is a usage error.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../../cli/main.js';
import type { Io } from '../../../cli/verbs.js';
import { readBackup } from '../../../functions/common/stored-records.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';

async function lifeboat(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    out: { write: (s: string) => out.push(s) > 0 },
    err: { write: (s: string) => err.push(s) > 0 },
  } as unknown as Io;
  const code = await main(argv, io);
  return { code, out: out.join(''), err: err.join('') };
}

describe('backup create --from-schedule --local', () => {
  let root: string;
  let dir: string;
  let namespace: string;
  const core = () => kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'lifeboat-from-schedule-'));
    dir = join(root, 'backups');
    namespace = uniqueName('from-schedule');
    await core().createNamespace({ body: { metadata: { name: namespace } } });
    await core().createNamespacedConfigMap({ namespace, body: { metadata: { name: 'kept' } } });
  });

  afterAll(async () => {
    await core()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  });

  it("backs up the schedule's template now, named as its firing", async () => {
    const where = ['--local', '--dir', dir];
    const created = await lifeboat(
      'schedule',
      'create',
      'nightly',
      '--schedule',
      '0 3 * * *',
      '--include-namespaces',
      namespace,
      '--labels',
      'team=shop',
      ...where,
    );
    expect(created, created.err).toMatchObject({ code: 0 });
    const before = Math.floor(Date.now() / 1000) * 1000;
    const ran = await lifeboat(
      'backup',
      'create',
      '--from-schedule',
      'nightly',
      ...where,
      '--kubeconfig',
      testEnv().clusters.source.kubeconfig,
      '--repository-key-file',
      join(root, 'repository.key'),
      '-o',
      'json',
    );
    expect(ran.code, ran.err).toBe(0);
    const document = JSON.parse(ran.out) as {
      metadata: { name: string; labels: Record<string, string> };
      status: { phase: string };
    };
    const name = document.metadata.name;
    expect(name).toMatch(/^nightly-\d{14}$/);
    const stamp = name.slice('nightly-'.length);
    const at = Date.UTC(
      Number(stamp.slice(0, 4)),
      Number(stamp.slice(4, 6)) - 1,
      Number(stamp.slice(6, 8)),
      Number(stamp.slice(8, 10)),
      Number(stamp.slice(10, 12)),
      Number(stamp.slice(12, 14)),
    );
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
    expect(document.metadata.labels).toMatchObject({ 'velero.io/schedule-name': 'nightly' });
    const stored = await readBackup(new LocalDirectoryStore(dir), name);
    expect(stored?.document).toMatchObject({
      spec: { includedNamespaces: [namespace] },
      status: { phase: 'Completed' },
    });
  });

  it('refuses NAME, template flags and a missing schedule with --from-schedule', async () => {
    const where = ['--local', '--dir', dir];
    const named = await lifeboat('backup', 'create', 'mine', '--from-schedule', 'nightly', ...where);
    expect(named).toMatchObject({ code: 2, out: '' });
    expect(named.err).toContain('NAME and --from-schedule exclude each other');
    const flagged = await lifeboat('backup', 'create', '--from-schedule', 'nightly', '--ttl', '1h', ...where);
    expect(flagged).toMatchObject({ code: 2 });
    expect(flagged.err).toContain('--ttl cannot go with --from-schedule');
    const missing = await lifeboat('backup', 'create', '--from-schedule', 'gone', ...where);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.err).toContain('there is no schedule "gone"');
    const nameless = await lifeboat('backup', 'create', ...where);
    expect(nameless).toMatchObject({ code: 2 });
    expect(nameless.err).toContain('needs NAME, or --from-schedule');
  });
});
