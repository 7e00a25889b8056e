/**
 * Errors of the domain layer. Error names are API: state machine Retry/Catch rules match them,
 * so a name never changes once shipped. Two families: retryable and terminal.
 * Never put secret data or whole objects into a message.
 */

export class LifeboatError extends Error {
  /** Whether repeating the same step may succeed. */
  readonly retryable: boolean = false;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LifeboatError';
  }
}

/** One problem of a request, named by its field path (e.g. `spec.includedNamespaces[2]`). */
export interface FieldProblem {
  readonly path: string;
  readonly message: string;
}

/** The request cannot run as given; every problem is listed. Velero's phase `FailedValidation`. */
export class ValidationFailed extends LifeboatError {
  readonly problems: readonly FieldProblem[];

  constructor(problems: readonly FieldProblem[]) {
    super(`invalid request: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`);
    this.name = 'ValidationFailed';
    this.problems = problems;
  }
}

/** A backup or restore of this name already exists; names are never reused (write once). */
export class AlreadyExists extends LifeboatError {
  constructor(what: string) {
    super(`${what} already exists`);
    this.name = 'AlreadyExists';
  }
}

/** A backup that is still running cannot be deleted (Velero refuses the same). */
export class BackupInProgress extends LifeboatError {
  constructor(name: string) {
    super(`backup ${name} is still in progress`);
    this.name = 'BackupInProgress';
  }
}

/** A backup under S3 Object Lock cannot be deleted before its retention ends. */
export class BackupRetained extends LifeboatError {
  readonly until: Date;

  constructor(name: string, retention: { mode: string; until: Date }) {
    super(
      `backup ${name} is retained by S3 Object Lock (${retention.mode} mode) until ${retention.until?.toISOString()}: it cannot be deleted before`,
    );
    this.name = 'BackupRetained';
    this.until = retention.until;
  }
}

/**
 * The run's claim on its name was found dead (its lease ran out) or taken: the run stops and
 * writes nothing more, since its failure was recorded by whoever found it.
 */
export class RunAbandoned extends LifeboatError {
  constructor(reason: string) {
    super(`the run was given up: ${reason}`);
    this.name = 'RunAbandoned';
  }
}

/** A transient failure (throttling, 429/5xx, SlowDown, network): the step may be retried. */
export class RetryableError extends LifeboatError {
  override readonly retryable: boolean = true;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableError';
  }
}

/** A LIST continue token expired (HTTP 410 Gone): the listing restarts from the beginning. */
export class ListExpired extends LifeboatError {
  constructor(resource: string) {
    super(`the list of ${resource} expired (410 Gone)`);
    this.name = 'ListExpired';
  }
}

/** A backup archive that a restore refuses: it names the entry and why. Nothing is created. */
export class HostileArchive extends LifeboatError {
  readonly entry: string;

  constructor(entry: string, reason: string) {
    super(`the backup archive is refused at entry "${entry}": ${reason}`);
    this.name = 'HostileArchive';
    this.entry = entry;
  }
}

/**
 * A file of a backup or restore that cannot be read as what it should be: too large once
 * decompressed, a gzip bomb, not gzip, not JSON, or not the document it names. It names the file
 * and its key, and why; never its content. Terminal: reading it again gives the same.
 */
export class StoredFileUnreadable extends LifeboatError {
  readonly key: string;

  constructor(
    file: { readonly what: string; readonly key: string },
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${file.what} (${file.key}) ${reason}`, options);
    this.name = 'StoredFileUnreadable';
    this.key = file.key;
  }
}

/** A resource type that discovery listed no longer exists (its CRD was deleted meanwhile). */
export class ResourceGone extends LifeboatError {
  constructor(resource: string) {
    super(`the resource ${resource} is no longer served`);
    this.name = 'ResourceGone';
  }
}

/**
 * A cloud API refused a request and repeating it will not help (invalid parameter, not found,
 * unauthorized, incorrect state). `code` is the provider's error code, e.g. `InvalidVolume.NotFound`.
 */
export class CloudRequestRefused extends LifeboatError {
  readonly code: string;

  constructor(message: string, options: { code: string; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.name = 'CloudRequestRefused';
    this.code = options.code;
  }
}

/**
 * A recipe's hook step failed with onError Fail (docs/recipes.md): the workflow stops at that
 * step — the state machine catches this name and finalizes the backup, PartiallyFailed.
 */
export class RecipeStepFailed extends LifeboatError {
  constructor(message: string) {
    super(message);
    this.name = 'RecipeStepFailed';
  }
}

/** No pack holds the blob an index, manifest or tree names (deleted, or never written). */
export class BlobMissing extends LifeboatError {
  readonly blobId: string;

  constructor(blobId: string, options?: { cause?: unknown; reason?: string }) {
    super(`blob ${blobId} is not in the repository${options?.reason ? `: ${options.reason}` : ''}`, options);
    this.name = 'BlobMissing';
    this.blobId = blobId;
  }
}

/** A stored blob failed its check: the AEAD tag, decompression, or its id recomputed from the plaintext. */
export class BlobCorrupt extends LifeboatError {
  readonly blobId: string;

  constructor(blobId: string, reason: string, options?: { cause?: unknown }) {
    super(`blob ${blobId} is corrupt: ${reason}`, options);
    this.name = 'BlobCorrupt';
    this.blobId = blobId;
  }
}

/**
 * A repository object other than a blob (format, index, pack header, snapshot manifest) that
 * cannot be decrypted or parsed. `key` names the object; its content never goes into the message.
 */
export class RepositoryObjectCorrupt extends LifeboatError {
  readonly key: string;

  constructor(key: string, reason: string, options?: { cause?: unknown }) {
    super(`repository object ${key} is unreadable: ${reason}`, options);
    this.name = 'RepositoryObjectCorrupt';
    this.key = key;
  }
}

/** The repository was written in a format (or with a scheme) this version cannot read. */
export class RepositoryFormatUnsupported extends LifeboatError {
  constructor(reason: string) {
    super(`the repository's format is not supported: ${reason}`);
    this.name = 'RepositoryFormatUnsupported';
  }
}

/** No snapshot manifest has this id. */
export class SnapshotManifestMissing extends LifeboatError {
  readonly manifestId: string;

  constructor(manifestId: string) {
    super(`snapshot manifest ${manifestId} is not in the repository`);
    this.name = 'SnapshotManifestMissing';
    this.manifestId = manifestId;
  }
}

/**
 * A writer's lease lapsed (it could not renew it in time), so garbage collection may have deleted
 * packs it deduplicated against: nothing it wrote may be named by a manifest. A re-run starts a
 * new writer, which deduplicates against what is really there.
 */
export class RepositoryLeaseLost extends LifeboatError {
  override readonly retryable: boolean = true;

  constructor(writerId: string) {
    super(`repository writer ${writerId} lost its lease; run again`);
    this.name = 'RepositoryLeaseLost';
  }
}

/** Another garbage collection (or index compaction) holds the repository's maintenance lock. */
export class RepositoryBusy extends LifeboatError {
  override readonly retryable: boolean = true;

  constructor(what: string) {
    super(`the repository is busy: ${what}`);
    this.name = 'RepositoryBusy';
  }
}

/**
 * A file-mode snapshot's tree that a restore refuses (a name leaving its directory, a malformed
 * entry): it names the blob and field and why. Nothing outside the target is touched.
 */
export class HostileFileTree extends LifeboatError {
  readonly where: string;

  constructor(where: string, reason: string) {
    super(`the file snapshot is refused at ${where}: ${reason}`);
    this.name = 'HostileFileTree';
    this.where = where;
  }
}

/**
 * A data-mover job was cancelled: its task was stopped (SIGTERM, what ECS StopTask sends) or its
 * cancel marker was written. What was durable stays (a re-run deduplicates against it); nothing
 * half-written is flushed, and no manifest is written.
 */
export class DataMoverCancelled extends LifeboatError {
  readonly reason: string;

  constructor(reason: string) {
    super(`the data mover job was cancelled: ${reason}`);
    this.name = 'DataMoverCancelled';
    this.reason = reason;
  }
}

/** No Schedule of that name is stored (API 404). */
export class ScheduleNotFound extends LifeboatError {
  constructor(name: string) {
    super(`schedule "${name}" does not exist`);
    this.name = 'ScheduleNotFound';
  }
}
