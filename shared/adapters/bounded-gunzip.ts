/**
 * A gunzip that stops inflating once its output passes a total or a ratio to its input: what
 * every read of a backup's gzip'd files goes through, so that a few megabytes that inflate to
 * gigabytes are refused within the first megabytes, never held or even produced.
 */
import { createGunzip, type Gunzip } from 'node:zlib';

export interface InflationLimits {
  /** The most bytes out. */
  readonly maxBytes: number;
  /** The highest out:in ratio, once past `ratioCheckAfterBytes` out. */
  readonly maxRatio: number;
  readonly ratioCheckAfterBytes: number;
}

/** Bytes in and out so far; `compressed` is counted by whoever feeds the gunzip. */
export interface InflationCount {
  compressed: number;
  decompressed: number;
}

/** Counts the compressed bytes as they pass, for the ratio check. */
export async function* countedInput(
  body: AsyncIterable<Uint8Array>,
  count: InflationCount,
): AsyncGenerator<Uint8Array> {
  for await (const chunk of body) {
    count.compressed += chunk.length;
    yield chunk;
  }
}

/**
 * The gunzip; past a limit it is destroyed with the error `refusal` makes of the reason (which
 * says the limit, never the data).
 */
export function boundedGunzip(options: {
  limits: InflationLimits;
  count: InflationCount;
  refusal: (reason: string) => Error;
}): Gunzip {
  const { limits, count, refusal } = options;
  const gunzip = createGunzip();
  gunzip.on('data', (chunk: Buffer) => {
    count.decompressed += chunk.length;
    if (count.decompressed > limits.maxBytes) {
      gunzip.destroy(refusal(`more than ${limits.maxBytes} bytes once decompressed`));
    } else if (
      count.decompressed > limits.ratioCheckAfterBytes &&
      count.decompressed > count.compressed * limits.maxRatio
    ) {
      gunzip.destroy(refusal(`decompresses more than ${limits.maxRatio} times its size (a gzip bomb)`));
    }
  });
  return gunzip;
}
