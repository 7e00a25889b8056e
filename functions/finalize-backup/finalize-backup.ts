/**
 * FinalizeBackup: writes the backup in Velero's layout from the workers' results: the tarball
 * (streamed, never held whole in memory), logs, results, resource list, item operations, native
 * volume snapshots and volume info (volumes.ts), and `velero-backup.json` last, as the commit
 * marker. Each object is written only if absent, so a retried step completes what a crashed one
 * began and never overwrites.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, gzipSync } from 'node:zlib';
import { z } from 'zod';
import { tarOf } from '../../shared/adapters/tar-archive.js';
import { backupRequest } from '../../shared/contracts/backup-request.js';
import {
  type BackupRun,
  type CollectedSummary,
  collectedSummary,
  messageResult,
} from '../../shared/contracts/backup-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import { formatDuration, parseDuration } from '../../shared/domain/kubernetes/duration.js';
import {
  type BackupPhase,
  backupDocument,
  resourceList,
} from '../../shared/domain/storage/backup-document.js';
import { backupKeys, backupWorkKeys } from '../../shared/domain/storage/keys.js';
import { countLevels, formatLogLine, type LogEvent } from '../../shared/domain/storage/log.js';
import { countOf, emptyResults, mergeResults, type Results } from '../../shared/domain/storage/results.js';
import { END_OF_ARCHIVE_BYTES, withoutEndOfArchive } from '../../shared/domain/storage/tar-fragments.js';
import { FORMAT_VERSION, VERSION_ENTRY } from '../../shared/domain/storage/tarball-layout.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { FAST_GZIP, gunzipFast } from '../common/gzip.js';
import { putOnce, putStreamOnce } from '../common/write-once.js';
import { finalizedVolumes } from './volumes.js';

const logTextOnly = z.object({ logText: messageResult.shape.logText });

/** Messages whose result (and fragment) are read ahead while the tarball or the log is written. */
const READ_AHEAD = 8;

/** `read` of each key, in order, with the reads of the next few keys already under way. */
async function* readAhead<T>(keys: readonly string[], read: (key: string) => Promise<T>): AsyncGenerator<T> {
  const ahead: Promise<T>[] = [];
  for (let i = 0; i < keys.length; i++) {
    for (let j = ahead.length; j < Math.min(keys.length, i + READ_AHEAD); j++) {
      const pending = read(keys[j] ?? '');
      // Awaited in order below; never an unhandled rejection meanwhile.
      pending.catch(() => undefined);
      ahead.push(pending);
    }
    const value = await (ahead[i] as Promise<T>);
    delete ahead[i];
    yield value;
  }
}

export interface FinalizeBackupDeps {
  readonly store: ObjectStore;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}

export interface FinalizedBackup {
  readonly name: string;
  readonly phase: BackupPhase;
  readonly items: number;
  readonly errors: number;
  readonly warnings: number;
}

async function readRequest(store: ObjectStore, run: BackupRun) {
  const raw = await store.get(backupWorkKeys(run).request);
  if (!raw) throw new LifeboatError(`the request of backup ${run.name} is missing from the working data`);
  return backupRequest.parse(JSON.parse(Buffer.from(raw).toString('utf8')));
}

export async function readCollectLog(store: ObjectStore, run: BackupRun): Promise<LogEvent[]> {
  const raw = await store.get(backupWorkKeys(run).collectLog);
  return raw ? (JSON.parse(Buffer.from(raw).toString('utf8')) as LogEvent[]) : [];
}

/** The spec as Velero stores it: defaults filled in. */
export function storedSpec(
  spec: Record<string, unknown> & { ttl?: string | undefined },
): Record<string, unknown> {
  const ttlMs = spec.ttl ? parseDuration(spec.ttl) : undefined;
  return {
    ...spec,
    ttl: formatDuration(ttlMs ?? 720 * 3_600_000),
    storageLocation: typeof spec.storageLocation === 'string' ? spec.storageLocation : 'default',
  };
}

export async function finalizeBackup(
  input: { run: BackupRun },
  deps: FinalizeBackupDeps,
): Promise<FinalizedBackup> {
  const { run } = input;
  const keys = backupKeys(run.name);
  const work = backupWorkKeys(run);
  const request = await readRequest(deps.store, run);
  const mtime = new Date(run.startedAt);
  const collectedRaw = await deps.store.get(work.collected, { signal: deps.signal });
  if (!collectedRaw) throw new LifeboatError(`the collection summary of backup ${run.name} is missing`);
  const collected = collectedSummary.parse(JSON.parse(Buffer.from(collectedRaw).toString('utf8')));
  // Only the results of the attempt whose count completed the wait.
  const resultKeys = await deps.store.list(`${work.resultsDir}${collected.attempt}-`, {
    signal: deps.signal,
  });

  const collectLog = await readCollectLog(deps.store, run);
  let results: Results = emptyResults;
  let levels = { errors: 0, warnings: 0 };
  let listed: { apiVersion: string; kind: string; namespace: string; name: string }[] = [];
  let hookStatus = { hooksAttempted: 0, hooksFailed: 0 };

  // The tarball: the version entry, each message's fragment in order, then the end of the archive.
  const fragments = async function* (): AsyncGenerator<Uint8Array> {
    // Each pass gathers the side-file data afresh.
    results = emptyResults;
    levels = countLevels(collectLog);
    listed = [];
    hookStatus = { hooksAttempted: 0, hooksFailed: 0 };
    yield gzipSync(
      withoutEndOfArchive(await tarOf([{ name: VERSION_ENTRY, body: `${FORMAT_VERSION}\n` }], { mtime })),
      FAST_GZIP,
    );
    // Each result and its fragment are read a few messages ahead, in order: the store's round
    // trips overlap with the upload, and memory stays bounded by the window.
    const read = async (key: string) => {
      const raw = await deps.store.get(key, { signal: deps.signal });
      if (!raw) throw new LifeboatError(`the result ${key} disappeared from the working data`);
      const result = messageResult.parse(JSON.parse((await gunzipFast(raw)).toString('utf8')));
      if (result.fragmentKey === null) return { result, fragment: undefined };
      const fragment = await deps.store.get(result.fragmentKey, { signal: deps.signal });
      if (!fragment)
        throw new LifeboatError(`the fragment ${result.fragmentKey} disappeared from the working data`);
      return { result, fragment };
    };
    for await (const { result, fragment } of readAhead(resultKeys, read)) {
      results = mergeResults(results, { errors: result.errors, warnings: result.warnings });
      const counted = result.logLevels;
      levels = { errors: levels.errors + counted.errors, warnings: levels.warnings + counted.warnings };
      listed.push(...result.items);
      hookStatus = {
        hooksAttempted: hookStatus.hooksAttempted + (result.hooks?.attempted ?? 0),
        hooksFailed: hookStatus.hooksFailed + (result.hooks?.failed ?? 0),
      };
      if (fragment) yield fragment;
    }
    yield gzipSync(Buffer.alloc(END_OF_ARCHIVE_BYTES), FAST_GZIP);
  };
  if (!(await putStreamOnce(deps.store, keys.contents, fragments(), { contentType: 'application/gzip' }))) {
    // Written by an earlier attempt of this step: gather the side-file data without rewriting it.
    for await (const _ of fragments()) {
      // drained for its side effects on results, levels and listed
    }
  }
  const volumes = await finalizedVolumes({
    run,
    store: deps.store,
    attempt: collected.attempt,
    now: deps.clock.now(),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  results = mergeResults(results, volumes.results);
  const volumeLevels = countLevels(volumes.log);
  levels = { errors: levels.errors + volumeLevels.errors, warnings: levels.warnings + volumeLevels.warnings };

  const errors = Math.max(levels.errors, countOf(results.errors));
  const warnings = Math.max(levels.warnings, countOf(results.warnings));
  const phase: BackupPhase = errors > 0 ? 'PartiallyFailed' : 'Completed';
  const completedAt = deps.clock.now();
  const last: LogEvent = {
    time: completedAt.toISOString(),
    level: 'info',
    msg: `Backup ${phase}`,
    fields: { backup: run.name, items: listed.length },
  };
  // The log is streamed in a second pass over the results, never held whole.
  const logLines = async function* (): AsyncGenerator<Uint8Array> {
    const gzip = createGzip(FAST_GZIP);
    const lines = (events: readonly LogEvent[]): string =>
      events.map((e) => `${formatLogLine(e)}\n`).join('');
    const source = async function* (): AsyncGenerator<string> {
      yield lines(collectLog);
      const logTextOf = async (key: string): Promise<string> => {
        const raw = await deps.store.get(key, { signal: deps.signal });
        if (!raw) throw new LifeboatError(`the result ${key} disappeared from the working data`);
        // The first pass checked each result whole; this one needs only its log text.
        return logTextOnly.parse(JSON.parse((await gunzipFast(raw)).toString('utf8'))).logText;
      };
      for await (const text of readAhead(resultKeys, logTextOf)) yield text;
      yield lines([...volumes.log, last]);
    };
    const piped = pipeline(Readable.from(source()), gzip);
    // Observed at once, so a failing source is never an unhandled rejection.
    let failure: unknown;
    piped.catch((error: unknown) => {
      failure = error;
    });
    try {
      for await (const chunk of gzip) yield chunk as Uint8Array;
    } finally {
      gzip.destroy();
    }
    await piped.catch(() => undefined);
    if (failure) throw failure;
  };

  const json = { contentType: 'application/json' };
  const gz = (value: unknown): Buffer => gzipSync(JSON.stringify(value), FAST_GZIP);
  await putStreamOnce(deps.store, keys.logs, logLines(), { contentType: 'application/gzip' });
  await putOnce(deps.store, keys.results, gz(results), json);
  await putOnce(deps.store, keys.resourceList, gz(resourceList(listed)), json);
  await putOnce(deps.store, keys.itemOperations, gz(volumes.operations), json);
  await putOnce(deps.store, keys.volumeInfo, gz(volumes.volumeInfos), json);
  await putOnce(deps.store, keys.volumeSnapshots, gz(volumes.nativeSnapshots), json);
  await putOnce(deps.store, keys.podVolumeBackups, gz([]), json);

  const metadata = request.backup.metadata;
  const annotations = { ...(metadata.annotations ?? {}), ...sourceClusterAnnotations(collected) };
  const document = backupDocument({
    name: run.name,
    labels: { ...(metadata.labels ?? {}), 'velero.io/storage-location': 'default' },
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    spec: storedSpec(request.backup.spec as Record<string, unknown>),
    startedAt: new Date(run.startedAt),
    completedAt,
    expiration: new Date(run.expiration),
    phase,
    totalItems: listed.length,
    itemsBackedUp: listed.length,
    errors,
    warnings,
    hookStatus,
    volumeCounters: volumes.counters,
  });
  await putOnce(deps.store, keys.metadata, JSON.stringify(document, null, 2), json);
  return { name: run.name, phase, items: listed.length, errors, warnings };
}

/** Velero's backup controller records the source cluster's version on the Backup. */
function sourceClusterAnnotations(collected: CollectedSummary): Record<string, string> {
  const version = collected.serverVersion;
  if (!version) return {};
  return {
    'velero.io/source-cluster-k8s-gitversion': version.gitVersion,
    'velero.io/source-cluster-k8s-major-version': version.major,
    'velero.io/source-cluster-k8s-minor-version': version.minor,
  };
}
