/**
 * `-o json|yaml`: a document printed as JSON or YAML (the YAML library loaded only then), any
 * other form refused by its flag before anything is read.
 */
import { UsageError } from './flags.js';
import type { Io } from './verb-call.js';

export type OutputForm = 'json' | 'yaml' | 'text';

/** The form `-o` asks for; checked before a verb reads or changes anything. */
export function outputForm(output: string | undefined): OutputForm {
  if (output === undefined) return 'text';
  if (output === 'json' || output === 'yaml') return output;
  throw new UsageError(`-o must be json or yaml, not ${JSON.stringify(output)}`);
}

/** Prints a document as JSON or YAML. */
export async function printDocument(options: {
  readonly io: Io;
  readonly form: 'json' | 'yaml';
  readonly document: unknown;
}): Promise<void> {
  if (options.form === 'json') {
    options.io.out.write(`${JSON.stringify(options.document, null, 2)}\n`);
    return;
  }
  const { stringify } = await import('./yaml.js');
  options.io.out.write(stringify(options.document));
}
