/**
 * Keeps a job's progress document current without slowing the job: the movers report every
 * block or file, the reporter writes the latest figures at most every `intervalMs` (one write in
 * flight at a time) and once more at the end. On each tick it also looks for the job's cancel
 * marker and calls `onCancel` when it appears. A failed interim write is tried again at the next
 * tick; the final write's failure is the caller's (the result must be recorded).
 */
import type {
  DataMoverCancel,
  DataMoverKind,
  DataMoverProgress,
  DataMoverResult,
} from '../../shared/contracts/data-mover-job.js';
import type { Clock } from '../../shared/ports/clock.js';
import type { JobWork } from './job-work.js';

export interface ProgressFigures {
  readonly bytesDone: number;
  readonly bytesTotal: number;
  readonly totalKnown: boolean;
  readonly blocksDone?: number;
  readonly blocksTotal?: number;
  readonly filesDone?: number;
  readonly filesTotal?: number;
}

export type ProgressPhase = DataMoverProgress['phase'];

export class ProgressReporter {
  private figures: ProgressFigures = { bytesDone: 0, bytesTotal: 0, totalKnown: false };
  private phase: ProgressPhase = 'opening';
  private dirty = true;
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly base: Pick<DataMoverProgress, 'jobId' | 'kind' | 'attempt' | 'startedAt'>;

  constructor(
    private readonly options: {
      work: JobWork;
      clock: Clock;
      jobId: string;
      kind: DataMoverKind;
      attempt: number;
      intervalMs: number;
      onCancel: (marker: DataMoverCancel) => void;
    },
  ) {
    this.base = {
      jobId: options.jobId,
      kind: options.kind,
      attempt: options.attempt,
      startedAt: options.clock.now().toISOString(),
    };
  }

  /** Writes the first document now, then keeps it current. */
  async start(): Promise<void> {
    await this.options.work.writeProgress(this.document({ state: 'Running' }));
    this.dirty = false;
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  update(figures: ProgressFigures): void {
    this.figures = figures;
    this.dirty = true;
  }

  enter(phase: ProgressPhase): void {
    this.phase = phase;
    this.dirty = true;
  }

  /** Stops the ticks and writes the final document: Completed with the result, or how it ended. */
  async finish(end: {
    state: Exclude<DataMoverProgress['state'], 'Running'>;
    result?: DataMoverResult;
    error?: DataMoverProgress['error'];
  }): Promise<DataMoverProgress> {
    clearInterval(this.timer);
    await this.writing;
    if (end.state === 'Completed') this.phase = 'done';
    const last = this.document({
      state: end.state,
      ...(end.result ? { result: end.result } : {}),
      ...(end.error ? { error: end.error } : {}),
    });
    await this.options.work.writeProgress(last);
    return last;
  }

  private document(extra: Pick<DataMoverProgress, 'state'> & Partial<DataMoverProgress>): DataMoverProgress {
    const f = this.figures;
    return {
      ...this.base,
      phase: this.phase,
      updatedAt: this.options.clock.now().toISOString(),
      bytesDone: f.bytesDone,
      bytesTotal: Math.max(f.bytesTotal, f.bytesDone),
      totalKnown: f.totalKnown,
      ...(f.blocksDone !== undefined ? { blocksDone: f.blocksDone } : {}),
      ...(f.blocksTotal !== undefined ? { blocksTotal: f.blocksTotal } : {}),
      ...(f.filesDone !== undefined ? { filesDone: f.filesDone } : {}),
      ...(f.filesTotal !== undefined ? { filesTotal: f.filesTotal } : {}),
      ...extra,
    };
  }

  private tick(): void {
    if (this.writing) return;
    this.writing = (async () => {
      try {
        const marker = await this.options.work.cancelRequested();
        if (marker) this.options.onCancel(marker);
        if (this.dirty) {
          this.dirty = false;
          await this.options.work.writeProgress(this.document({ state: 'Running' }));
        }
      } catch {
        // The store did not answer this time: the next tick writes the newer figures.
        this.dirty = true;
      } finally {
        this.writing = undefined;
      }
    })();
  }
}
