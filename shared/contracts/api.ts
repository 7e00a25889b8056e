/**
 * The HTTP API's own shapes, beside the Velero objects its bodies carry (backup-request.ts,
 * restore-request.ts): the query of a list, the error body every answer that is not 2xx has,
 * the list envelope, and Velero's DeleteBackupRequest that a deletion is followed by. docs/api.yaml
 * describes the same shapes; the contract tests hold the two together. Never throws on bad input:
 * every problem comes back by its field path.
 */
import * as z from 'zod';
import type { FieldProblem } from '../domain/errors.js';
import { type LabelSelector, parseSelector } from '../domain/kubernetes/label-selector.js';
import { problemsOf, type ValidationResult } from './kubernetes.js';

/** The error body of every answer that is not 2xx. */
export interface ApiError {
  /** What went wrong, as a name a program can match: FailedValidation, NotFound, AlreadyExists, … */
  readonly code: string;
  readonly message: string;
  /** For FailedValidation: every problem, by its field path in the request. */
  readonly problems?: readonly FieldProblem[];
}

export const MAX_PAGE = 500;
export const DEFAULT_PAGE = 100;

const listQuerySchema = z.strictObject({
  labelSelector: z.string().optional(),
  phase: z.string().min(1).optional(),
  cluster: z.string().min(1).optional(),
  limit: z.coerce
    .number({ message: 'must be a number' })
    .int({ message: 'must be a whole number' })
    .min(1, { message: 'must be at least 1' })
    .max(MAX_PAGE, { message: `must be at most ${MAX_PAGE}` })
    .optional(),
  continue: z.string().min(1).optional(),
  /** A named backup location other than the deployment's own (`dr`): listed read-only. */
  location: z.string().min(1).optional(),
});

export interface ListQuery {
  readonly selector?: LabelSelector;
  readonly phase?: string;
  readonly cluster?: string;
  readonly limit: number;
  /** The name after which the page starts (decoded from the `continue` token). */
  readonly after?: string;
  /** The backup location listed, when not the deployment's own. */
  readonly location?: string;
}

/** The `continue` token of a page: the last name it holds, opaque to clients. */
export function continueToken(lastName: string): string {
  return Buffer.from(JSON.stringify({ after: lastName })).toString('base64url');
}

function decodeContinue(token: string): string | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { after?: unknown };
    return typeof parsed.after === 'string' && parsed.after ? parsed.after : undefined;
  } catch {
    return undefined;
  }
}

/** A list's query string, checked: every problem by its parameter's name. */
export function parseListQuery(
  query: Readonly<Record<string, string | undefined>>,
): ValidationResult<ListQuery> {
  const parsed = listQuerySchema.safeParse(
    Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)),
  );
  if (!parsed.success) return { ok: false, problems: problemsOf(parsed.error) };
  const { labelSelector, phase, cluster, limit } = parsed.data;
  const problems: FieldProblem[] = [];
  const selector = labelSelector === undefined ? undefined : parseSelector(labelSelector);
  if (labelSelector !== undefined && !selector)
    problems.push({
      path: 'labelSelector',
      message: `is not a label selector: ${JSON.stringify(labelSelector)}`,
    });
  const after = parsed.data.continue === undefined ? undefined : decodeContinue(parsed.data.continue);
  if (parsed.data.continue !== undefined && after === undefined)
    problems.push({ path: 'continue', message: 'is not a continue token this API gave' });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    value: {
      ...(selector ? { selector } : {}),
      ...(phase ? { phase } : {}),
      ...(cluster ? { cluster } : {}),
      limit: limit ?? DEFAULT_PAGE,
      ...(after ? { after } : {}),
      ...(parsed.data.location ? { location: parsed.data.location } : {}),
    },
  };
}

/** A page of a list, as Kubernetes lists are shaped. */
export interface ObjectList<T> {
  readonly apiVersion: 'velero.io/v1';
  readonly kind: string;
  readonly metadata: { readonly continue?: string };
  readonly items: readonly T[];
}

/** Velero's DeleteBackupRequest phases. */
export type DeletionPhase = 'New' | 'InProgress' | 'Processed';

/** Velero's DeleteBackupRequest, with what Lifeboat's deletion did in `status`. */
export interface DeleteBackupRequest {
  readonly apiVersion: 'velero.io/v1';
  readonly kind: 'DeleteBackupRequest';
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    /** Which deletion of the backup this is: 1, then 2 when a failed one is tried again. */
    readonly generation: number;
    readonly creationTimestamp: string;
  };
  readonly spec: { readonly backupName: string };
  readonly status: {
    readonly phase: DeletionPhase;
    /** Why something could not be deleted (Velero's status.errors). */
    readonly errors?: readonly string[];
    /** Lifeboat: what was deleted, once Processed. */
    readonly snapshotsDeleted?: readonly string[];
    readonly manifestsDeleted?: readonly string[];
    readonly objectsDeleted?: number;
    readonly deleted?: boolean;
    readonly gc?: Readonly<Record<string, unknown>>;
  };
}

/** A link to download one object, and when it stops working. */
export interface DownloadLink {
  readonly url: string;
  readonly expiresAt: string;
}

/** The clusters a deployment serves. */
export interface ClusterList {
  readonly items: readonly { readonly name: string }[];
}
