/**
 * A Schedule's drill target on the local server with a controllable clock, against the real
 * source and DR control planes: the server's timers fire the Schedule every minute; the first
 * firing has no Completed backup to drill and says so; the next drills the first backup into the
 * DR cluster under the mapping, and the drill's report is Completed with no mismatch.
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
import { readDrillReport } from '../../../functions/common/drill-records.js';
import { createSchedule, getSchedule } from '../../../functions/schedules/schedules.js';
import { LocalDirectoryStore } from '../../../shared/adapters/local-directory-store.js';
import type { Clock } from '../../../shared/ports/clock.js';
import { kubeConfigFor, testEnv, uniqueName, useDrCluster } from '../support/env.js';

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

describe("a Schedule's drill target on the local server", () => {
  const dr = useDrCluster();
  let root: string;
  let store: LocalDirectoryStore;
  let executions: LocalExecutions;
  let namespace: string;
  const source = () => kubeConfigFor(testEnv().clusters.source).makeApiClient(CoreV1Api);

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'lifeboat-drill-schedule-'));
    store = new LocalDirectoryStore(join(root, 'store'));
    const served = new Map([
      ['source', { path: testEnv().clusters.source.kubeconfig }],
      ['dr', { path: dr().kubeconfig }],
    ]);
    executions = new LocalExecutions(
      await localRunners({
        store,
        clusterNamed: clusterReacher(served),
        values: { 'repository-key-file': join(root, 'repository.key') },
      }),
    );
    namespace = uniqueName('drilled');
    await source().createNamespace({ body: { metadata: { name: namespace } } });
    await source().createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { mode: 'live' } },
    });
  });

  afterAll(async () => {
    await executions?.settled();
    await source()
      .deleteNamespace({ name: namespace })
      .catch(() => undefined);
    await kubeConfigFor(dr())
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: `${namespace}-dr` })
      .catch(() => undefined);
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('drills the latest Completed backup at each firing once there is one, and reports it', async () => {
    // Prepare: a schedule every minute drilling into the DR cluster under a mapping.
    const base = Math.ceil(Date.now() / MINUTE) * MINUTE;
    const clock = new SteppedClock(base - 30_000);
    const timer = { put: async () => undefined, remove: async () => undefined };
    const deps = { store, executions, clock, timer };
    await createSchedule(
      {
        cluster: 'source',
        drill: { cluster: 'dr', namespaceMapping: { [namespace]: `${namespace}-dr` }, readyTimeout: '2m' },
        schedule: {
          metadata: { name: 'drilled' },
          spec: { schedule: '* * * * *', template: { includedNamespaces: [namespace] } },
        },
      },
      deps,
    );
    const runner = new ScheduleRunner({ store, executions, clock, gcIntervalMs: 24 * 60 * MINUTE });

    // Act: two minutes, each firing's runs ended before the next.
    const outcomes = [];
    for (let minute = 0; minute < 2; minute++) {
      clock.set(base + minute * MINUTE + 1_000);
      outcomes.push(...(await runner.tick()).fired.map((f) => f.outcome));
      await executions.settled();
    }

    // Assess: no drill before a backup completed; then a drill of the first backup, Completed.
    expect(outcomes).toEqual([
      {
        backup: `drilled-${stamp(base)}`,
        drillSkipped: 'schedule "drilled" has no Completed backup to drill yet',
      },
      { backup: `drilled-${stamp(base + MINUTE)}`, drill: `drilled-drill-${stamp(base + MINUTE)}` },
    ]);
    const report = await readDrillReport(store, `drilled-drill-${stamp(base + MINUTE)}`);
    expect(report?.mismatches).toEqual([]);
    expect(report).toMatchObject({
      phase: 'Completed',
      cluster: 'dr',
      firedBySchedule: 'drilled',
      backup: { name: `drilled-${stamp(base)}`, schedule: 'drilled' },
      namespaceMapping: { [namespace]: `${namespace}-dr` },
    });
    expect(report?.rpoSeconds).toBeGreaterThanOrEqual(0);
    expect(report?.rtoSeconds).toBeGreaterThanOrEqual(0);
    const restored = await kubeConfigFor(dr())
      .makeApiClient(CoreV1Api)
      .readNamespacedConfigMap({ namespace: `${namespace}-dr`, name: 'settings' });
    expect(restored.data).toEqual({ mode: 'live' });
    const status = (await getSchedule('drilled', deps)).schedule.status;
    expect(status?.lastDrillName).toBe(`drilled-drill-${stamp(base + MINUTE)}`);
    expect(status?.lastDrillSkippedReason).toBeUndefined();
  });
});
