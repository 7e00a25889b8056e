/**
 * The start of a data-mover run, whose round trips are most of a re-run's time: the questions
 * that do not depend on each other are asked together (the job's progress and cancel marker; the
 * first progress document and the repository's opening). Checked by the order of the calls, never
 * by timing.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DataMoverDeps, runDataMoverJob } from '../../../../functions/data-mover/data-mover.js';
import { fileChunkingRecord } from '../../../../functions/data-mover/file-backup.js';
import { storedJobWork } from '../../../../functions/data-mover/job-work.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../shared/adapters/local-key-wrapper.js';
import { openRepository } from '../../../../shared/adapters/repository/open-repository.js';
import type { DataMoverJob } from '../../../../shared/contracts/data-mover-job.js';
import { DataMoverCancelled } from '../../../../shared/domain/errors.js';
import { fileTreeChildren } from '../../../../shared/domain/files/tree.js';
import { dataMoverWorkKeys } from '../../../../shared/domain/storage/keys.js';
import type { PutOptions } from '../../../../shared/ports/object-store.js';
import { DelegatingStore } from '../../shared/adapters/repository/support.js';

/** Records when each call to the job's working data starts and ends. */
class EventStore extends DelegatingStore {
  readonly events: string[] = [];
  private async seen<T>(what: string, call: () => Promise<T>): Promise<T> {
    this.events.push(`start ${what}`);
    try {
      return await call();
    } finally {
      this.events.push(`end ${what}`);
    }
  }
  override get(k: string, options?: { signal?: AbortSignal }): Promise<Uint8Array | undefined> {
    return this.seen(`get ${k.split('/').at(-1)}`, () => super.get(k, options));
  }
  override put(k: string, body: Uint8Array | string, options?: PutOptions): Promise<void> {
    return this.seen(`put ${k.split('/').at(-1)}`, () => super.put(k, body, options));
  }
}

async function setUp(): Promise<{ store: EventStore; job: DataMoverJob; deps: DataMoverDeps }> {
  const root = await mkdtemp(join(tmpdir(), 'run-start-'));
  const store = new EventStore(new LocalDirectoryStore(join(root, 'store')));
  await mkdir(join(root, 'volume'));
  await writeFile(join(root, 'volume', 'a.txt'), 'a');
  const job: DataMoverJob = {
    kind: 'file-backup',
    jobId: 'start-1',
    repository: { directory: join(root, 'store'), keyFile: join(root, 'repository.key') },
    source: { path: join(root, 'volume') },
  };
  const deps: DataMoverDeps = {
    openRepository: async ({ create, signal }) => {
      store.events.push('open');
      return openRepository({
        store,
        keys: await LocalKeyWrapper.fromFile(join(root, 'repository.key'), { create }),
        ...(create ? { create: { fileChunking: fileChunkingRecord } } : {}),
        fileTreeReferences: fileTreeChildren,
        signal,
      });
    },
    work: storedJobWork({ store, jobId: job.jobId }),
    clock: { now: () => new Date('2026-11-28T00:00:00Z') },
  };
  return { store, job, deps };
}

const at = (events: readonly string[], event: string): number => {
  const i = events.indexOf(event);
  expect(i, `${event} in ${events.join(', ')}`).toBeGreaterThanOrEqual(0);
  return i;
};

describe('the start of a data-mover run', () => {
  it('asks for the progress and the cancel marker together, and opens the repository while the first progress is written', async () => {
    const { store, job, deps } = await setUp();

    const done = await runDataMoverJob(job, deps);

    expect(done.state).toBe('Completed');
    const e = store.events;
    expect(at(e, 'start get cancel.json')).toBeLessThan(at(e, 'end get progress.json'));
    expect(at(e, 'start get progress.json')).toBeLessThan(at(e, 'end get cancel.json'));
    expect(at(e, 'open')).toBeLessThan(at(e, 'end put progress.json'));
  });

  it('opens no repository for a job cancelled before it started, and records it Cancelled', async () => {
    const { store, job, deps } = await setUp();
    await store.put(
      dataMoverWorkKeys(job.jobId).cancel,
      JSON.stringify({ requestedAt: '2026-11-28T00:00:00Z' }),
    );

    await expect(runDataMoverJob(job, deps)).rejects.toBeInstanceOf(DataMoverCancelled);

    expect(store.events).not.toContain('open');
    expect(await deps.work.readProgress()).toMatchObject({ state: 'Cancelled' });
  });
});
