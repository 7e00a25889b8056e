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
import * as z from 'zod';
import { readBackupDocument } from '../../shared/adapters/stored-file-reader.js';
import { tarOf } from '../../shared/adapters/tar-archive.js';
import { type BackupRequest, backupRequest } from '../../shared/contracts/backup-request.js';
import {
  type BackupRun,
  type CollectedSummary,
  collectedSummary,
  type MessageResult,
  messageResult,
} from '../../shared/contracts/backup-run.js';
import { LifeboatError } from '../../shared/domain/errors.js';
import {
  type BackupDocument,
  type BackupPhase,
  backupDocument,
  CLUSTER_ANNOTATION,
  resourceList,
} from '../../shared/domain/storage/backup-document.js';
import {
  RESOURCE_TIMEOUT_ANNOTATION,
  storedBackupSpec,
  VELERO_SERVER_DEFAULTS,
} from '../../shared/domain/storage/backup-spec.js';
import { backupKeys, backupWorkKeys } from '../../shared/domain/storage/keys.js';
import { countLevels, formatLogLine, type LogEvent } from '../../shared/domain/storage/log.js';
import { countOf, emptyResults, mergeResults, type Results } from '../../shared/domain/storage/results.js';
import { END_OF_ARCHIVE_BYTES, withoutEndOfArchive } from '../../shared/domain/storage/tar-fragments.js';
import { FORMAT_VERSION, VERSION_ENTRY } from '../../shared/domain/storage/tarball-layout.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';
import { FAST_GZIP, gunzipFast } from '../common/gzip.js';
import { renewClaim } from '../common/name-claim.js';
import { removeWorkData } from '../common/work-data.js';
import { putOnce, putStreamOnce } from '../common/write-once.js';
import { type FinalizedVolumes, finalizedVolumes } from './volumes.js';

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

/** What a pass over the messages' results reads. */
interface ResultsSource {
  readonly store: ObjectStore;
  readonly signal: AbortSignal | undefined;
  /** Only the results of the attempt whose count completed the wait, in order. */
  readonly resultKeys: readonly string[];
  /** CollectItems' own log lines, the first of the backup log. */
  readonly collectLog: readonly LogEvent[];
}

/** The side-file data the results add up to; each pass over them gathers it afresh. */
interface ResultsTally {
  results: Results;
  levels: { errors: number; warnings: number };
  listed: MessageResult['items'];
  hookStatus: { hooksAttempted: number; hooksFailed: number };
}

/** One pass writing (or, when written already, reading through) the tarball. */
type TarballPass = ResultsSource & { readonly mtime: Date; readonly tally: ResultsTally };

/** The collection summary, the request and the results a finished backup is made of. */
async function readWorkingData(
  run: BackupRun,
  deps: FinalizeBackupDeps,
): Promise<{ request: BackupRequest; collected: CollectedSummary; source: ResultsSource }> {
  const work = backupWorkKeys(run);
  const request = await readRequest(deps.store, run);
  const collectedRaw = await deps.store.get(work.collected, { signal: deps.signal });
  if (!collectedRaw) throw new LifeboatError(`the collection summary of backup ${run.name} is missing`);
  const collected = collectedSummary.parse(JSON.parse(Buffer.from(collectedRaw).toString('utf8')));
  // Only the results of the attempt whose count completed the wait.
  const resultKeys = await deps.store.list(`${work.resultsDir}${collected.attempt}-`, {
    signal: deps.signal,
  });
  const collectLog = await readCollectLog(deps.store, run);
  return { request, collected, source: { store: deps.store, signal: deps.signal, resultKeys, collectLog } };
}

/** One message's result, checked whole, and its tar fragment when it has one. */
async function readMessage(
  source: ResultsSource,
  key: string,
): Promise<{ result: MessageResult; fragment: Uint8Array | undefined }> {
  const raw = await source.store.get(key, { signal: source.signal });
  if (!raw) throw new LifeboatError(`the result ${key} disappeared from the working data`);
  const result = messageResult.parse(JSON.parse((await gunzipFast(raw)).toString('utf8')));
  if (result.fragmentKey === null) return { result, fragment: undefined };
  const fragment = await source.store.get(result.fragmentKey, { signal: source.signal });
  if (!fragment)
    throw new LifeboatError(`the fragment ${result.fragmentKey} disappeared from the working data`);
  return { result, fragment };
}

/**
 * The tarball: the version entry, each message's fragment in order, then the end of the archive;
 * on the way, the results are added up into `tally`.
 */
async function* tarballFragments(pass: TarballPass): AsyncGenerator<Uint8Array> {
  const { tally } = pass;
  // Each pass gathers the side-file data afresh.
  tally.results = emptyResults;
  tally.levels = countLevels(pass.collectLog);
  tally.listed = [];
  tally.hookStatus = { hooksAttempted: 0, hooksFailed: 0 };
  yield gzipSync(
    withoutEndOfArchive(
      await tarOf([{ name: VERSION_ENTRY, body: `${FORMAT_VERSION}\n` }], { mtime: pass.mtime }),
    ),
    FAST_GZIP,
  );
  // Each result and its fragment are read a few messages ahead, in order: the store's round
  // trips overlap with the upload, and memory stays bounded by the window.
  const read = (key: string) => readMessage(pass, key);
  for await (const { result, fragment } of readAhead(pass.resultKeys, read)) {
    tally.results = mergeResults(tally.results, { errors: result.errors, warnings: result.warnings });
    const counted = result.logLevels;
    tally.levels = {
      errors: tally.levels.errors + counted.errors,
      warnings: tally.levels.warnings + counted.warnings,
    };
    tally.listed.push(...result.items);
    tally.hookStatus = {
      hooksAttempted: tally.hookStatus.hooksAttempted + (result.hooks?.attempted ?? 0),
      hooksFailed: tally.hookStatus.hooksFailed + (result.hooks?.failed ?? 0),
    };
    if (fragment) yield fragment;
  }
  yield gzipSync(Buffer.alloc(END_OF_ARCHIVE_BYTES), FAST_GZIP);
}

/** Writes the tarball once; either way `tally` ends up holding what the results add up to. */
async function writeTarball(key: string, pass: TarballPass): Promise<void> {
  if (!(await putStreamOnce(pass.store, key, tarballFragments(pass), { contentType: 'application/gzip' }))) {
    // Written by an earlier attempt of this step: gather the side-file data without rewriting it.
    for await (const _ of tarballFragments(pass)) {
      // drained for its side effects on the tally
    }
  }
}

function logLinesOf(events: readonly LogEvent[]): string {
  return events.map((e) => `${formatLogLine(e)}\n`).join('');
}

/** The backup log's text: CollectItems' lines, each message's in order, then `tail`. */
async function* logTexts(source: ResultsSource, tail: readonly LogEvent[]): AsyncGenerator<string> {
  yield logLinesOf(source.collectLog);
  const logTextOf = async (key: string): Promise<string> => {
    const raw = await source.store.get(key, { signal: source.signal });
    if (!raw) throw new LifeboatError(`the result ${key} disappeared from the working data`);
    // The first pass checked each result whole; this one needs only its log text.
    return logTextOnly.parse(JSON.parse((await gunzipFast(raw)).toString('utf8'))).logText;
  };
  for await (const text of readAhead(source.resultKeys, logTextOf)) yield text;
  yield logLinesOf(tail);
}

/** The backup log, gzipped: streamed in a second pass over the results, never held whole. */
async function* backupLog(source: ResultsSource, tail: readonly LogEvent[]): AsyncGenerator<Uint8Array> {
  const gzip = createGzip(FAST_GZIP);
  const piped = pipeline(Readable.from(logTexts(source, tail)), gzip);
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
}

const asJson = { contentType: 'application/json' };
const gzippedJson = (value: unknown): Buffer => gzipSync(JSON.stringify(value), FAST_GZIP);

/** The side files after the log: results, resource list, item operations and the volume files. */
async function writeSideFiles(options: {
  store: ObjectStore;
  keys: ReturnType<typeof backupKeys>;
  tally: ResultsTally;
  volumes: FinalizedVolumes;
}): Promise<void> {
  const { store, keys, tally, volumes } = options;
  await putOnce(store, keys.results, gzippedJson(tally.results), asJson);
  await putOnce(store, keys.resourceList, gzippedJson(resourceList(tally.listed)), asJson);
  await putOnce(store, keys.itemOperations, gzippedJson(volumes.operations), asJson);
  await putOnce(store, keys.volumeInfo, gzippedJson(volumes.volumeInfos), asJson);
  // Velero writes its empty lists as JSON null (nil Go slices); 1.17 and 1.18 read either.
  const list = (items: readonly unknown[]): Buffer => gzippedJson(items.length > 0 ? items : null);
  await putOnce(store, keys.volumeSnapshots, list(volumes.nativeSnapshots), asJson);
  await putOnce(store, keys.podVolumeBackups, list([]), asJson);
  // The classes of the CSI snapshots Velero took itself; Lifeboat's CSI snapshots name theirs
  // in the volume info, so this stays Velero's empty list.
  await putOnce(store, keys.csiVolumeSnapshotClasses, list([]), asJson);
}

/** How the backup ended: its phase, and the larger of the counts its log and its results give. */
interface Verdict {
  readonly phase: BackupPhase;
  readonly errors: number;
  readonly warnings: number;
}

function verdictOf(tally: ResultsTally): Verdict {
  const errors = Math.max(tally.levels.errors, countOf(tally.results.errors));
  const warnings = Math.max(tally.levels.warnings, countOf(tally.results.warnings));
  return { phase: errors > 0 ? 'PartiallyFailed' : 'Completed', errors, warnings };
}

/** `velero-backup.json`: the request's Backup with the status the run ended in. */
function finishedDocument(options: {
  run: BackupRun;
  request: BackupRequest;
  collected: CollectedSummary;
  completedAt: Date;
  verdict: Verdict;
  tally: ResultsTally;
  volumes: FinalizedVolumes;
}): BackupDocument {
  const { run, request, tally, verdict } = options;
  const metadata = request.backup.metadata;
  const annotations = {
    ...(metadata.annotations ?? {}),
    ...sourceClusterAnnotations(options.collected),
    [RESOURCE_TIMEOUT_ANNOTATION]: VELERO_SERVER_DEFAULTS.resourceTimeout,
    // Which cluster it is a backup of: the API lists backups by cluster.
    [CLUSTER_ANNOTATION]: run.cluster,
  };
  return backupDocument({
    name: run.name,
    labels: { ...(metadata.labels ?? {}), 'velero.io/storage-location': 'default' },
    ...(Object.keys(annotations).length > 0 ? { annotations } : {}),
    spec: storedBackupSpec(request.backup.spec as Record<string, unknown>),
    startedAt: new Date(run.startedAt),
    completedAt: options.completedAt,
    expiration: new Date(run.expiration),
    phase: verdict.phase,
    totalItems: tally.listed.length,
    itemsBackedUp: tally.listed.length,
    errors: verdict.errors,
    warnings: verdict.warnings,
    hookStatus: tally.hookStatus,
    volumeCounters: options.volumes.counters,
  });
}

export async function finalizeBackup(
  input: { run: BackupRun },
  deps: FinalizeBackupDeps,
): Promise<FinalizedBackup> {
  const { run } = input;
  const keys = backupKeys(run.name);
  const withSignal = deps.signal ? { signal: deps.signal } : {};
  // velero-backup.json is written last: a retry after it only finishes the working data's removal.
  const earlier = await readBackupDocument(deps.store, run.name, withSignal);
  if (earlier) {
    await removeWorkData({ store: deps.store, dir: backupWorkKeys(run).dir, ...withSignal });
    return outcomeOf(earlier);
  }
  // A run found dead meanwhile (and recorded Failed) must not write a backup beside that record.
  await renewClaim({ store: deps.store, key: keys.claim, runId: run.runId, clock: deps.clock });
  const { request, collected, source } = await readWorkingData(run, deps);
  const tally: ResultsTally = {
    results: emptyResults,
    levels: { errors: 0, warnings: 0 },
    listed: [],
    hookStatus: { hooksAttempted: 0, hooksFailed: 0 },
  };
  await writeTarball(keys.contents, { ...source, mtime: new Date(run.startedAt), tally });
  const volumes = await finalizedVolumes({
    run,
    store: deps.store,
    attempt: collected.attempt,
    now: deps.clock.now(),
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  tally.results = mergeResults(tally.results, volumes.results);
  const volumeLevels = countLevels(volumes.log);
  tally.levels = {
    errors: tally.levels.errors + volumeLevels.errors,
    warnings: tally.levels.warnings + volumeLevels.warnings,
  };

  const verdict = verdictOf(tally);
  const completedAt = deps.clock.now();
  const last: LogEvent = {
    time: completedAt.toISOString(),
    level: 'info',
    msg: `Backup ${verdict.phase}`,
    fields: { backup: run.name, items: tally.listed.length },
  };
  const log = backupLog(source, [...volumes.log, last]);
  await putStreamOnce(deps.store, keys.logs, log, { contentType: 'application/gzip' });
  await writeSideFiles({ store: deps.store, keys, tally, volumes });
  const document = finishedDocument({ run, request, collected, completedAt, verdict, tally, volumes });
  await putOnce(deps.store, keys.metadata, JSON.stringify(document, null, 2), asJson);
  await removeWorkData({ store: deps.store, dir: backupWorkKeys(run).dir, ...withSignal });
  const { phase, errors, warnings } = verdict;
  return { name: run.name, phase, items: tally.listed.length, errors, warnings };
}

/** What an earlier, finished attempt of this step returned, read back from velero-backup.json. */
function outcomeOf(document: BackupDocument): FinalizedBackup {
  const { status } = document;
  return {
    name: document.metadata.name,
    phase: status.phase,
    items: status.progress?.itemsBackedUp ?? 0,
    errors: status.errors ?? 0,
    warnings: status.warnings ?? 0,
  };
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
