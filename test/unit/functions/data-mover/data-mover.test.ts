/**
 * The data mover's use case over the real pack repository and working data on a local directory
 * store, with file-mode jobs (block jobs run against moto in
 * test/integration/data-mover/data-mover-process.test.ts): the progress document from Running to
 * Completed with the result, a completed job answered again without work, a manifest found
 * instead of written twice, the cancel marker, failures recorded by name, verify and gc.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { type DataMoverDeps, runDataMoverJob } from '../../../../functions/data-mover/data-mover.js';
import { fileChunkingRecord } from '../../../../functions/data-mover/file-backup.js';
import { storedJobWork } from '../../../../functions/data-mover/job-work.js';
import { LocalDirectoryStore } from '../../../../shared/adapters/local-directory-store.js';
import { LocalKeyWrapper } from '../../../../shared/adapters/local-key-wrapper.js';
import { openRepository } from '../../../../shared/adapters/repository/open-repository.js';
import {
  type DataMoverJob,
  type DataMoverProgress,
  dataMoverProgress,
} from '../../../../shared/contracts/data-mover-job.js';
import { DataMoverCancelled, SnapshotManifestMissing } from '../../../../shared/domain/errors.js';
import { fileTreeChildren } from '../../../../shared/domain/files/tree.js';
import { dataMoverWorkKeys, repositoryKeys } from '../../../../shared/domain/storage/keys.js';
import type { Clock } from '../../../../shared/ports/clock.js';

const clock: Clock = { now: () => new Date('2026-11-23T12:00:00.000Z') };
const sha = (data: Uint8Array): string => createHash('sha256').update(data).digest('hex');

describe('runDataMoverJob', () => {
  let root: string;
  let store: LocalDirectoryStore;
  let source: string;
  const content = randomBytes(300_000);
  const repository = (): DataMoverJob['repository'] => ({
    directory: join(root, 'store'),
    keyFile: join(root, 'repository.key'),
  });

  /** The use case's ports, as main.ts builds them for a directory repository. */
  const depsFor = (job: DataMoverJob, signal?: AbortSignal): DataMoverDeps => ({
    openRepository: async ({ create, signal: s }) =>
      openRepository({
        store,
        keys: await LocalKeyWrapper.fromFile(join(root, 'repository.key'), { create: create === true }),
        ...(create ? { create: { fileChunking: fileChunkingRecord } } : {}),
        fileTreeReferences: fileTreeChildren,
        signal: s,
      }),
    work: storedJobWork({ store, jobId: job.jobId }),
    clock,
    ...(signal ? { signal } : {}),
  });
  const run = (job: DataMoverJob): Promise<DataMoverProgress> => runDataMoverJob(job, depsFor(job));
  const progressOf = async (jobId: string): Promise<DataMoverProgress | undefined> => {
    const body = await store.get(dataMoverWorkKeys(jobId).progress);
    // Strictly, as the state machine's reader does.
    return body ? dataMoverProgress.parse(JSON.parse(Buffer.from(body).toString('utf8'))) : undefined;
  };

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'data-mover-'));
    store = new LocalDirectoryStore(join(root, 'store'));
    source = join(root, 'volume');
    await mkdir(join(source, 'dir'), { recursive: true });
    await writeFile(join(source, 'dir', 'data.bin'), content);
  });

  it('backs up and restores a tree, recording progress and the result in the working data', async () => {
    const backup: DataMoverJob = {
      kind: 'file-backup',
      jobId: 'fs-backup-1',
      repository: repository(),
      source: { path: source },
      tags: { backup: 'nightly', pvcNamespace: 'shop', pvcName: 'data' },
    };

    const done = await run(backup);

    expect(done).toMatchObject({
      jobId: 'fs-backup-1',
      kind: 'file-backup',
      state: 'Completed',
      phase: 'done',
      attempt: 1,
      bytesDone: content.length,
      bytesTotal: content.length,
      filesDone: 1,
      result: {
        kind: 'file-backup',
        manifestId: 'fs-backup-1',
        files: 1,
        directories: 2,
        alreadyStored: false,
      },
    });
    expect(await progressOf('fs-backup-1')).toEqual(done);

    const target = join(root, 'restored');
    const restored = await run({
      kind: 'file-restore',
      jobId: 'fs-restore-1',
      repository: repository(),
      manifestId: 'fs-backup-1',
      target: { path: target },
    });
    expect(restored.result).toMatchObject({ kind: 'file-restore', files: 1, bytesWritten: content.length });
    expect(sha(await readFile(join(target, 'dir', 'data.bin')))).toBe(sha(content));
  });

  it('answers a completed job again from its record, and finds a written manifest instead of writing another', async () => {
    const job: DataMoverJob = {
      kind: 'file-backup',
      jobId: 'fs-again',
      repository: repository(),
      source: { path: source },
    };
    const first = await run(job);
    await writeFile(join(source, 'dir', 'later.txt'), 'not in this backup');

    expect(await run(job)).toEqual(first);

    // A run that wrote its manifest and died before recording its result.
    await store.delete(dataMoverWorkKeys('fs-again').progress);
    const found = await run(job);
    expect(found.result).toMatchObject({
      kind: 'file-backup',
      manifestId: 'fs-again',
      alreadyStored: true,
      files: 0,
    });
    expect(found.result?.kind === 'file-backup' && found.result.stats).toEqual(
      first.result?.kind === 'file-backup' && first.result.stats,
    );
    expect(await store.list(repositoryKeys.snapshotsDir)).toEqual([repositoryKeys.snapshot('fs-again')]);
  });

  it('is cancelled by its cancel marker: Cancelled, and no manifest', async () => {
    const job: DataMoverJob = {
      kind: 'file-backup',
      jobId: 'fs-cancel',
      repository: repository(),
      source: { path: source },
    };
    await store.put(
      dataMoverWorkKeys('fs-cancel').cancel,
      JSON.stringify({ requestedAt: '2026-11-23T11:00:00Z' }),
    );

    await expect(run(job)).rejects.toThrow(DataMoverCancelled);

    expect(await progressOf('fs-cancel')).toMatchObject({
      state: 'Cancelled',
      error: {
        name: 'DataMoverCancelled',
        message: expect.stringContaining('cancel requested at 2026-11-23T11:00:00Z'),
      },
    });
    expect(await store.exists(repositoryKeys.snapshot('fs-cancel'))).toBe(false);
  });

  it('is cancelled when its signal aborts (SIGTERM)', async () => {
    const job: DataMoverJob = {
      kind: 'file-backup',
      jobId: 'fs-stop',
      repository: repository(),
      source: { path: source },
    };
    const stop = new AbortController();
    stop.abort(new DataMoverCancelled('SIGTERM received (the task was stopped)'));

    await expect(runDataMoverJob(job, depsFor(job, stop.signal))).rejects.toThrow('SIGTERM received');

    expect(await progressOf('fs-stop')).toMatchObject({
      state: 'Cancelled',
      error: { name: 'DataMoverCancelled' },
    });
  });

  it('records a failure by its error’s name, and a re-run after it is the next attempt', async () => {
    await run({ kind: 'file-backup', jobId: 'fs-base', repository: repository(), source: { path: source } });
    const job: DataMoverJob = {
      kind: 'file-restore',
      jobId: 'fs-missing',
      repository: repository(),
      manifestId: 'no-such-manifest',
      target: { path: join(root, 'nowhere') },
    };

    await expect(run(job)).rejects.toThrow(SnapshotManifestMissing);
    expect(await progressOf('fs-missing')).toMatchObject({
      state: 'Failed',
      attempt: 1,
      error: { name: 'SnapshotManifestMissing', retryable: false },
    });
    await expect(run(job)).rejects.toThrow(SnapshotManifestMissing);
    expect((await progressOf('fs-missing'))?.attempt).toBe(2);
  });

  it('verifies every blob and collects garbage after a manifest is deleted', async () => {
    await run({ kind: 'file-backup', jobId: 'fs-kept', repository: repository(), source: { path: source } });

    const verified = await run({ kind: 'verify', jobId: 'verify-1', repository: repository() });
    expect(verified.result).toMatchObject({ kind: 'verify', problems: [], problemCount: 0 });
    expect(verified.result?.kind === 'verify' && verified.result.blobsChecked).toBeGreaterThan(1);

    const collected = await run({ kind: 'gc', jobId: 'gc-1', repository: repository() });
    expect(collected.result).toMatchObject({
      kind: 'gc',
      liveManifests: 1,
      packsDeleted: 0,
      packsRepacked: 0,
      blobsCopied: 0,
      bytesCopied: 0,
      problems: [],
      problemCount: 0,
    });
    // What the state machine reads back: the documents parse strictly.
    expect(await progressOf('verify-1')).toEqual(verified);
    expect(await progressOf('gc-1')).toEqual(collected);
  });

  it("repacks partly dead packs by the gc job's repackDeadFraction (1: never)", async () => {
    // Two backups share data.bin; only the first has other.bin, which dies with its manifest.
    await writeFile(join(source, 'dir', 'other.bin'), randomBytes(600_000));
    await run({ kind: 'file-backup', jobId: 'fs-a', repository: repository(), source: { path: source } });
    const kept = join(root, 'kept');
    await mkdir(join(kept, 'dir'), { recursive: true });
    await writeFile(join(kept, 'dir', 'data.bin'), content);
    await run({ kind: 'file-backup', jobId: 'fs-b', repository: repository(), source: { path: kept } });
    const repo = await openRepository({
      store,
      keys: await LocalKeyWrapper.fromFile(join(root, 'repository.key'), { create: false }),
      fileTreeReferences: fileTreeChildren,
    });
    await repo.deleteManifest('fs-a');

    const never = await run({
      kind: 'gc',
      jobId: 'gc-never',
      repository: repository(),
      repackDeadFraction: 1,
    });
    expect(never.result).toMatchObject({ kind: 'gc', liveManifests: 1, packsRepacked: 0, blobsCopied: 0 });
    const byDefault = await run({ kind: 'gc', jobId: 'gc-default', repository: repository() });
    expect(byDefault.result).toMatchObject({ kind: 'gc', liveManifests: 1, packsRepacked: 1 });
    expect(byDefault.result?.kind === 'gc' && byDefault.result.blobsCopied).toBeGreaterThan(0);
    expect(await progressOf('gc-never')).toEqual(never);

    // The other backup still restores, byte for byte.
    const target = join(root, 'restored');
    await run({
      kind: 'file-restore',
      jobId: 'fs-b-restore',
      repository: repository(),
      manifestId: 'fs-b',
      target: { path: target },
    });
    expect(sha(await readFile(join(target, 'dir', 'data.bin')))).toBe(sha(content));
  });
});
