/** The ItemBlock queue: SQS in AWS, an in-memory queue with a worker pool locally. */
export interface WorkQueue {
  /** Sends messages (in batches where the transport has them); resolves when all are accepted. */
  send(messages: readonly string[], options?: { signal?: AbortSignal }): Promise<void>;
}
