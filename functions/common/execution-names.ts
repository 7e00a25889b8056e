/**
 * The names of the executions the API starts. A name is the idempotency key of a create: the
 * same backup or restore name (and body) always gives the same execution name, so a retried
 * request finds the execution it started. Once a backup or restore of that name is deleted, its
 * generation moves on and the name can be used again. Step Functions allows 80 characters of
 * `[A-Za-z0-9-_]`; a Kubernetes name may have 253 and dots, so long names end in a hash.
 */
import { createHash } from 'node:crypto';
import { generationKeys } from '../../shared/domain/storage/keys.js';
import type { Workflow } from '../../shared/ports/executions.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

const MAX = 80;

function withinLimit(text: string): string {
  const safe = text.replace(/[^A-Za-z0-9_-]/g, '_');
  if (safe.length <= MAX) return safe;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 16);
  return `${safe.slice(0, MAX - hash.length - 1)}-${hash}`;
}

/** The execution of a workflow for one name and generation (and, for deletions, attempt). */
export function executionName(options: {
  readonly workflow: Workflow;
  readonly name: string;
  readonly generation: number;
  readonly attempt?: number;
}): string {
  const { workflow, name, generation, attempt } = options;
  const suffix = `${generation > 0 ? `.g${generation}` : ''}${attempt !== undefined ? `.d${attempt}` : ''}`;
  return withinLimit(`${workflow === 'delete' ? 'delete-' : ''}${name}${suffix}`);
}

/** How many times a backup or restore of this name was deleted: its current generation. */
export async function generationOf(options: {
  readonly store: ObjectStore;
  readonly kind: 'backups' | 'restores';
  readonly name: string;
}): Promise<number> {
  const raw = await options.store.get(generationKeys(options.kind, options.name));
  if (!raw) return 0;
  const parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as { generation?: unknown };
  return typeof parsed.generation === 'number' ? parsed.generation : 0;
}

/** Moves the name's generation on: called once its backup or restore is deleted. */
export async function nextGeneration(options: {
  readonly store: ObjectStore;
  readonly kind: 'backups' | 'restores';
  readonly name: string;
}): Promise<void> {
  const generation = (await generationOf(options)) + 1;
  await options.store.put(generationKeys(options.kind, options.name), JSON.stringify({ generation }), {
    contentType: 'application/json',
  });
}
