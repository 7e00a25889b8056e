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
