/**
 * Schedules on the local server with a controllable clock, against the real local cluster and a
 * directory store, the workflows run by the local server's orchestrator: a schedule every minute
 * makes backups named and labelled as Velero names them; a firing while the previous backup runs
 * is skipped and recorded; `gc --dry-run` predicts exactly what GC then deletes (expired by TTL,
 * not kept by keep-last), the native snapshots of the deleted backups with them (in moto), and
 * what it keeps stays.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterReacher } from '../../../cli/server/clusters.js';
import { LocalExecutions } from '../../../cli/server/local-executions.js';
import { localRunners } from '../../../cli/server/runners.js';
import { ScheduleRunner } from '../../../cli/server/schedule-runner.js';
import { collectGarbage } from '../../../functions/collect-garbage/collect-garbage.js';
import { storedBackupNames } from '../../../functions/common/stored-records.js';
import { fireSchedule } from '../../../functions/fire-schedule/fire-schedule.js';
import { createSchedule, getSchedule } from '../../../functions/schedules/schedules.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import { readBackupDocument } from '../../../shared/adapters/stored-file-reader.js';
import type { Clock } from '../../../shared/ports/clock.js';
import type { ScheduleTimer } from '../../../shared/ports/scheduler.js';
import { kubeConfigFor, testEnv, uniqueName } from '../support/env.js';
import { snapshotsOfBackup, useVolumeFixtures } from '../support/volumes.js';

class SteppedClock implements Clock {
  constructor(private at: number) {}
  now(): Date {
    return new Date(this.at);
  }
  set(at: number): void {
    this.at = at;
  }
}

const MINUTE = 60_000;
const stamp = (ms: number) => new Date(ms).toISOString().replace(/[-:T]/g, '').slice(0, 14);

describe('schedules on the local server', () => {
  let root: string;
  let store: LocalDirectoryStore;
  let executions: LocalExecutions;
  let namespace: string;
  const puts: string[] = [];
  const fixtures = useVolumeFixtures();
  const timer: ScheduleTimer = {
    put: async ({ name, expressions, enabled }) => {
      puts.push(`${name} ${expressions.map((e) => e.expression).join('|')} ${enabled}`);
    },
    remove: async () => undefined,
  };

  const savedEnv = { ...process.env };

  beforeAll(async () => {
    // EC2 (moto) as the server finds it: from its environment.
    const aws = testEnv().aws;
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: aws.endpoint,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
    });
    root = await mkdtemp(join(tmpdir(), 'lifeboat-schedules-'));
    store = new LocalDirectoryStore(join(root, 'store'));
    const served = new Map([['source', { path: testEnv().clusters.source.kubeconfig }]]);
    executions = new LocalExecutions(
      await localRunners({
        store,
        clusterNamed: clusterReacher(served),
        values: {
          'repository-key-file': join(root, 'repository.key'),
          'snapshot-region': testEnv().aws.region,
        },
      }),
    );
    namespace = uniqueName('sched');
    const core = kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { a: '1' } },
    });
    // An EBS volume in moto: every scheduled backup snapshots it natively.
    const zone = `${testEnv().aws.region}a`;
    const volume = await fixtures.ebsVolume({ zone });
    await fixtures.claimWithVolume({
      namespace,
      claim: 'logs',
      source: { awsElasticBlockStore: { volumeID: `aws://${zone}/${volume}`, fsType: 'ext4' } },
    });
  });

  afterAll(async () => {
    await executions?.settled();
    process.env = savedEnv;
    await kubeConfigFor(testEnv().clusters.source)
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('fires every minute, skips while the previous runs, and GC deletes what its dry run predicted', async () => {
    // Prepare: the clock on a whole minute, a schedule every minute keeping the last two, and
    // one whose backups live one second.
    const base = Math.ceil(Date.now() / MINUTE) * MINUTE;
    const clock = new SteppedClock(base - 30_000);
    const deps = { store, executions, clock, timer };
    const template = { includedNamespaces: [namespace] };
    await createSchedule(
      {
        cluster: 'source',
        schedule: {
          metadata: {
            name: 'kept',
            labels: { team: 'shop' },
            annotations: { 'lifeboat.io/retention': '{"keepLast":2}' },
          },
          spec: { schedule: '* * * * *', template: { ...template, metadata: { labels: { tier: 'gold' } } } },
        },
      },
      deps,
    );
    await createSchedule(
      {
        cluster: 'source',
        schedule: {
          metadata: { name: 'brief' },
          spec: { schedule: '@every 5m', template: { ...template, ttl: '1s' } },
        },
      },
      deps,
    );
    expect(puts).toEqual(['kept cron(* * * * ? *) true', 'brief rate(5 minutes) true']);
    const runner = new ScheduleRunner({ store, executions, clock, gcIntervalMs: 24 * 60 * MINUTE });

    // Act: four minutes, each backup finished before the next; then one firing while one runs.
    const fired: string[] = [];
    for (let minute = 0; minute < 4; minute++) {
      clock.set(base + minute * MINUTE + 1_000);
      for (const f of (await runner.tick()).fired)
        fired.push('backup' in f.outcome ? f.outcome.backup : f.outcome.skipped);
      await executions.settled();
    }
    clock.set(base + 4 * MINUTE + 30_000);
    const started = (await runner.tick()).fired.map((f) => f.outcome).reverse(); // schedules tick by name
    clock.set(base + 5 * MINUTE + 1_000);
    const whileRunning = (await runner.tick()).fired.find((f) => f.schedule === 'kept')?.outcome;
    await executions.settled();

    // Assess: Velero's names and labels; the skip recorded in the schedule's status.
    expect(fired).toEqual([0, 1, 2, 3].map((m) => `kept-${stamp(base + m * MINUTE)}`));
    expect(started).toEqual([
      { backup: `kept-${stamp(base + 4 * MINUTE)}` },
      { backup: `brief-${stamp(base + 4 * MINUTE + 30_000)}` },
    ]);
    expect(whileRunning).toEqual({
      skipped: expect.stringMatching(/^the previous backup kept-\d{14} is still running/),
    });
    const status = (await getSchedule('kept', deps)).schedule.status;
    expect(status?.lastSkipped).toBe(new Date(base + 5 * MINUTE).toISOString());
    // The first firing again (a retried Scheduler invocation): the same backup, the status kept.
    const again = await fireSchedule({ schedule: 'kept', scheduledTime: new Date(base) }, deps);
    expect(again).toEqual({ backup: fired[0] });
    expect((await getSchedule('kept', deps)).schedule.status).toEqual(status);
    const first = await readBackupDocument(store, fired[0] ?? '');
    expect(first?.status.phase).toBe('Completed');
    expect(first?.metadata.labels).toMatchObject({
      'velero.io/schedule-name': 'kept',
      team: 'shop',
      tier: 'gold',
    });

    // Act: GC a day later, dry run first.
    const kept = await storedBackupNames(store);
    for (const name of kept) expect((await snapshotsOfBackup(name)).length, name).toBe(1);
    clock.set(Date.now() + 24 * 60 * MINUTE);
    const predicted = await collectGarbage({ dryRun: true }, deps);
    expect(await storedBackupNames(store)).toEqual(kept);
    const report = await collectGarbage({ dryRun: false }, deps);
    await executions.settled();

    // Assess: the three oldest of `kept` (keepLast 2) and the expired `brief` one, as predicted.
    const expected = [0, 1, 2].map((m) => `kept-${stamp(base + m * MINUTE)}`);
    expected.push(`brief-${stamp(base + 4 * MINUTE + 30_000)}`);
    expect(predicted.deleted.map((d) => d.name).sort()).toEqual(expected.sort());
    expect(report.deleted).toEqual(predicted.deleted);
    expect(report.failures).toEqual([]);
    expect(predicted.deleted.find((d) => d.name.startsWith('brief'))?.reasons[0]).toMatch(/^expired at /);
    expect(predicted.deleted.find((d) => d.name.startsWith('kept'))?.reasons).toEqual([
      'not kept by the retention of schedule kept (keepLast 2)',
    ]);
    expect(await storedBackupNames(store)).toEqual(kept.filter((n) => !expected.includes(n)).sort());
    expect((await collectGarbage({ dryRun: true }, deps)).deleted).toEqual([]);
    // The deleted backups' snapshots are gone from moto; each kept backup keeps its own.
    for (const name of expected) expect(await snapshotsOfBackup(name), name).toEqual([]);
    for (const name of await storedBackupNames(store))
      expect((await snapshotsOfBackup(name)).length, name).toBe(1);
  });
});
