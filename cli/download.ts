/**
 * A backup's archive written to the file `backup download` names (default NAME-data.tar.gz, as
 * `velero backup download` writes it), from the directory or a download link; an existing file
 * is kept unless --force. Prints where it went, or that as JSON or YAML.
 */
import { createWriteStream } from 'node:fs';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UsageError } from './flags.js';
import { type OutputForm, printDocument } from './output.js';
import type { Io } from './verb-call.js';

export async function saveDownload(options: {
  readonly name: string;
  readonly source: AsyncIterable<Uint8Array>;
  readonly values: { readonly file?: string; readonly force?: boolean };
  readonly form: OutputForm;
  readonly io: Io;
}): Promise<number> {
  const { name, values, io } = options;
  const file = resolve(values.file ?? `${name}-data.tar.gz`);
  let bytes = 0;
  const counted = async function* () {
    for await (const chunk of options.source) {
      bytes += chunk.length;
      yield chunk;
    }
  };
  try {
    await pipeline(Readable.from(counted()), createWriteStream(file, { flags: values.force ? 'w' : 'wx' }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      throw new UsageError(`${file} exists: give --force to overwrite it, or --file FILE`);
    throw error;
  }
  if (options.form === 'text') io.out.write(`Backup ${name} has been successfully downloaded to ${file}\n`);
  else await printDocument({ io, form: options.form, document: { name, file, bytes } });
  return 0;
}
