/**
 * The last N bytes of a stream, for hook output: a hook may print without limit, a Lambda's
 * memory and a log line may not. Keeps chunks, drops whole or part chunks from the head.
 * Decodes as UTF-8 starting at a character boundary, so a cut never shows a broken character.
 */

export class OutputTail {
  private readonly limit: number;
  private chunks: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(limitBytes: number) {
    this.limit = limitBytes;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.kept += chunk.length;
    while (this.kept > this.limit) {
      const first = this.chunks[0];
      if (!first) break;
      const excess = this.kept - this.limit;
      if (first.length <= excess) {
        this.chunks.shift();
        this.kept -= first.length;
        this.dropped += first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.kept -= excess;
        this.dropped += excess;
      }
    }
  }

  /** Bytes dropped from the head so far. */
  get droppedBytes(): number {
    return this.dropped;
  }

  text(): string {
    let bytes = Buffer.concat(this.chunks);
    if (this.dropped > 0) {
      // Skip UTF-8 continuation bytes (10xxxxxx) left by the cut, at most three.
      let start = 0;
      while (start < 3 && start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
      bytes = bytes.subarray(start);
    }
    return bytes.toString('utf8');
  }
}
