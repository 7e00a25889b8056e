/**
 * What the backup state machine's steps pass each other, and the ItemBlock queue messages.
 * Payloads stay small (Step Functions caps them at 256 KiB): object keys and counts travel,
 * item lists live in the object store.
 */
import * as z from 'zod';
import { validationOutcomeOf } from './kubernetes.js';

export const backupRun = z.strictObject({
  name: z.string(),
  cluster: z.string(),
  runId: z.string(),
  startedAt: z.string(),
  expiration: z.string(),
  /** How long the workers may take for all ItemBlocks before the backup fails (TimeoutSecondsPath). */
  itemBlocksTimeoutSeconds: z.number().int().positive(),
});
export type BackupRun = z.infer<typeof backupRun>;

export const validateBackupInput = z.object({ request: z.unknown(), runId: z.string().min(1) });

export const validationOutcome = validationOutcomeOf(backupRun);
export type ValidationOutcome = z.infer<typeof validationOutcome>;

export const collectItemsInput = z.object({ run: backupRun, taskToken: z.string().min(1) });

const itemRef = z.strictObject({
  group: z.string(),
  version: z.string(),
  resource: z.string(),
  namespace: z.string(),
  name: z.string(),
});

export const blockItem = z.strictObject({
  ref: itemRef,
  kind: z.string(),
  /** Whether `ref.version` is the server's preferred version (adds the -preferredversion copy). */
  preferred: z.boolean(),
  /**
   * The object as the API served it, as JSON text: the worker writes these bytes to the tarball
   * as they are, and parses only the objects it must look into (pods for hooks, volumes).
   */
  json: z.string(),
});
export type BlockItem = z.infer<typeof blockItem>;

export const itemBlockPayload = z.union([
  z.strictObject({ id: z.string(), items: z.array(blockItem) }),
  /** A block too large for a message: its items are in the object store. */
  z.strictObject({ id: z.string(), itemsKey: z.string() }),
]);

export const itemBlockMessage = z.strictObject({
  backup: z.strictObject({ name: z.string(), runId: z.string(), startedAt: z.string() }),
  /** Results are recorded per message; completion counts messages. */
  messageId: z.string(),
  blocks: z.array(itemBlockPayload),
});
export type ItemBlockMessage = z.infer<typeof itemBlockMessage>;

/** What CollectItems records once every message is sent. */
export const collectedSummary = z.strictObject({
  /** The CollectItems attempt whose messages count; results of other attempts are ignored. */
  attempt: z.string(),
  messages: z.number().int().nonnegative(),
  blocks: z.number().int().nonnegative(),
  items: z.number().int().nonnegative(),
  taskToken: z.string(),
  /** The source cluster's version, for Velero's `velero.io/source-cluster-k8s-*` annotations. */
  serverVersion: z.strictObject({ gitVersion: z.string(), major: z.string(), minor: z.string() }).optional(),
  /**
   * A recipe group step's wait: only the results of its messages (`<attempt>-s<step>-`) count
   * towards `messages`; unset, every message of the attempt does.
   */
  waitPrefix: z.string().optional(),
});
export type CollectedSummary = z.infer<typeof collectedSummary>;

const result = z.strictObject({
  velero: z.array(z.string()).readonly().optional(),
  cluster: z.array(z.string()).readonly().optional(),
  namespaces: z.record(z.string(), z.array(z.string()).readonly()).readonly().optional(),
});

/** One message's outcome, written by the worker (or by the dead-letter handler). */
export const messageResult = z.strictObject({
  messageId: z.string(),
  items: z.array(
    z.strictObject({ apiVersion: z.string(), kind: z.string(), namespace: z.string(), name: z.string() }),
  ),
  /** The message's tar entries: a gzip member without the end-of-archive blocks; null when none. */
  fragmentKey: z.string().nullable(),
  errors: result,
  warnings: result,
  /** The message's log lines, formatted once by the worker (FinalizeBackup only concatenates). */
  logText: z.string(),
  logLevels: z.strictObject({ errors: z.number().int(), warnings: z.number().int() }),
  /** Exec hooks of the message's blocks (or recipe hook step): FinalizeBackup sums them into hookStatus. */
  hooks: z
    .strictObject({ attempted: z.number().int().nonnegative(), failed: z.number().int().nonnegative() })
    .optional(),
  /** A recipe hook step's result: its failure (onError Fail) stops the workflow. */
  stopsWorkflow: z.boolean().optional(),
});
export type MessageResult = z.infer<typeof messageResult>;

/** What the wait on the ItemBlocks resumes with. */
export const blocksDone = z.strictObject({
  messages: z.number().int(),
  blocks: z.number().int(),
  items: z.number().int(),
  volumeOperations: z.array(z.unknown()),
  /**
   * ItemBlocks a worker left for a long hook run (their hooks may outlast a Lambda), as
   * `<messageId>/<blockId>`, without a result yet: the LongHookBlocks stage runs each.
   */
  longHookBlocks: z.array(z.string()).optional(),
});
export type BlocksDone = z.infer<typeof blocksDone>;
