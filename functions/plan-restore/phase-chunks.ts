/**
 * PlanRestore's planned items by restore step and phase, written to the working data in chunks
 * so memory stays bounded by chunk size × phases; a dry run keeps them for its preview instead.
 * Chunks are numbered per resource over the whole restore: a step's phase lists its own. Never
 * decides what is restored, only where a planned item goes.
 */
import type { PlannedItem, RestorePhase, RestoreRun } from '../../shared/contracts/restore-run.js';
import { restorePhases } from '../../shared/domain/restore/order.js';
import { restoreWorkKeys } from '../../shared/domain/storage/keys.js';
import type { ObjectStore } from '../../shared/ports/object-store.js';

const DEFAULT_CHUNK_SIZE = 500;

interface StepPhaseItems {
  readonly step: number;
  readonly groupResource: string;
  readonly items: PlannedItem[];
}

const stepPhase = (step: number, groupResource: string): string => `${step}|${groupResource}`;

export class PhaseChunks {
  private readonly run: RestoreRun;
  private readonly store: ObjectStore;
  private readonly work: ReturnType<typeof restoreWorkKeys>;
  private readonly chunkSize: number;
  /** The items of each step's phase not yet in a chunk, by `stepPhase`. */
  private readonly buffers = new Map<string, StepPhaseItems>();
  /** Full chunks waiting for the next flush. */
  private readonly pending: StepPhaseItems[] = [];
  private readonly chunksWritten = new Map<string, number>();
  private readonly stepChunks = new Map<string, number[]>();
  private readonly counts = new Map<string, number>();
  private readonly dryRunItems: { step: number; item: PlannedItem }[] = [];
  private nextPhase = 0;

  constructor(options: { run: RestoreRun; store: ObjectStore; chunkSize?: number }) {
    this.run = options.run;
    this.store = options.store;
    this.work = restoreWorkKeys(options.run);
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
  }

  /** Adds an item to its step's phase; a full chunk waits for the next flush. */
  add(item: PlannedItem, step: number): void {
    const key = stepPhase(step, item.groupResource);
    const buffer = this.buffers.get(key) ?? { step, groupResource: item.groupResource, items: [] };
    buffer.items.push(item);
    this.buffers.set(key, buffer);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (buffer.items.length >= this.chunkSize) {
      this.pending.push(buffer);
      this.buffers.set(key, { step, groupResource: item.groupResource, items: [] });
    }
  }

  /** Writes the full chunks (a dry run keeps their items). */
  async flush(): Promise<void> {
    for (const { step, groupResource, items } of this.pending.splice(0)) {
      if (this.run.dryRun) {
        this.dryRunItems.push(...items.map((item) => ({ step, item })));
        continue;
      }
      const n = this.chunksWritten.get(groupResource) ?? 0;
      this.chunksWritten.set(groupResource, n + 1);
      const key = stepPhase(step, groupResource);
      this.stepChunks.set(key, [...(this.stepChunks.get(key) ?? []), n]);
      await this.store.put(this.work.chunk(groupResource, n), JSON.stringify(items), {
        contentType: 'application/json',
      });
    }
  }

  /** Writes every chunk, the partly filled ones included: the last flush. */
  async flushAll(): Promise<void> {
    for (const buffer of this.buffers.values()) if (buffer.items.length > 0) this.pending.push(buffer);
    this.buffers.clear();
    await this.flush();
  }

  /** A step's phases in Velero's order, numbered over the whole restore (outcome keys sort so). */
  phasesOf(step: number): RestorePhase[] {
    const prefix = `${step}|`;
    return restorePhases(
      [...this.counts.keys()].flatMap((key) => (key.startsWith(prefix) ? [key.slice(prefix.length)] : [])),
    ).map((gr) => {
      // Listed, not computed in the state machine: States.ArrayRange stops at 1,000 entries.
      const chunkIndexes = this.stepChunks.get(stepPhase(step, gr)) ?? [];
      return {
        index: this.nextPhase++,
        groupResource: gr,
        chunks: chunkIndexes.length,
        items: this.counts.get(stepPhase(step, gr)) ?? 0,
        chunkIndexes,
      };
    });
  }

  get totalItems(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }

  /** A dry run's items of a step, in the order planned. */
  dryRunItemsOf(step: number): PlannedItem[] {
    return this.dryRunItems.filter((d) => d.step === step).map((d) => d.item);
  }
}
