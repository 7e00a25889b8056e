/** What a verb's module is given: its operand, its flags' values, and where to print. Types only. */
import type { FlagSet, FlagValues } from './flags.js';

/** Where a verb prints: results to `out`, progress and problems to `err`. */
export interface Io {
  readonly out: NodeJS.WriteStream;
  readonly err: NodeJS.WriteStream;
}

/** One verb's call: its operand (undefined: none given), its flags' values, where to print. */
export interface VerbCall<F extends FlagSet> {
  readonly name: string | undefined;
  readonly values: FlagValues<F>;
  readonly io: Io;
}
