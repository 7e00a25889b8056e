/**
 * Writes tar entries into one buffer, as Velero writes them: regular files, mode 0755, in the
 * bytes tar-stream writes. tar-stream runs a stream per entry, which cost a backup more than all
 * its other per-item work; so an entry whose name fits a ustar header (ASCII, at most 100 bytes,
 * or split at a slash into a prefix of at most 155) gets its header here, the same bytes
 * tar-stream's header encoder writes, straight into one buffer. Any other entry (a pax header
 * for its name) is written by tar-stream itself. test/unit/shared/adapters/tar-archive.test.ts
 * holds the two to the same bytes.
 */
import { pack } from 'tar-stream';

export interface TarEntry {
  readonly name: string;
  readonly body: string | Uint8Array;
}

const BLOCK = 512;
/** Two zero blocks end a tar archive. */
const END_OF_ARCHIVE = 2 * BLOCK;
const MODE = 0o755;
/** The largest size a ustar header holds in octal (11 digits); tar-stream goes binary beyond. */
const MAX_OCTAL_SIZE = 8 ** 11 - 1;

/** A number in octal, zero-padded to `digits`, then a space (tar-stream's encodeOct). */
function octal(value: number, digits: number): string {
  const text = value.toString(8);
  if (text.length > digits) return `${'7'.repeat(digits)} `;
  return `${'0'.repeat(digits - text.length)}${text} `;
}

/** Sum of a string's char codes (ASCII here): its bytes' share of a header checksum. */
function byteSum(text: string): number {
  let sum = 0;
  for (let i = 0; i < text.length; i++) sum += text.charCodeAt(i);
  return sum;
}

/**
 * The fields every header of the archive shares (mode, owner, mtime, type, magic, device
 * numbers), as tar-stream encodes a regular file's header with uid and gid 0 and no user names.
 */
function headerTemplate(mtime: Date): { block: Buffer; sum: number } {
  const block = Buffer.alloc(BLOCK);
  block.write(octal(MODE, 6), 100, 'latin1');
  block.write(octal(0, 6), 108, 'latin1');
  block.write(octal(0, 6), 116, 'latin1');
  block.write(octal((mtime.getTime() / 1000) | 0, 11), 136, 'latin1');
  block.write('0', 156, 'latin1');
  block.write('ustar\u000000', 257, 'latin1');
  block.write(octal(0, 6), 329, 'latin1');
  block.write(octal(0, 6), 337, 'latin1');
  // The checksum counts its own 8 bytes as spaces.
  let sum = 8 * 32;
  for (const byte of block) sum += byte;
  return { block, sum };
}

/** A ustar name and prefix for `name`, split as tar-stream splits it; undefined: a pax header is needed. */
function ustarName(name: string): { name: string; prefix: string } | undefined {
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) > 0x7f) return undefined;
  let rest = name;
  let prefix = '';
  while (rest.length > 100) {
    const slash = rest.indexOf('/');
    if (slash === -1) return undefined;
    prefix += prefix ? `/${rest.slice(0, slash)}` : rest.slice(0, slash);
    rest = rest.slice(slash + 1);
  }
  if (prefix.length > 155) return undefined;
  return { name: rest, prefix };
}

/** One entry as tar-stream writes it (its header blocks, body and padding). */
async function tarStreamEntry(entry: TarEntry, mtime: Date): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  archive.entry({ name: entry.name, mode: MODE, mtime, type: 'file' }, Buffer.from(entry.body));
  archive.finalize();
  await ended;
  const whole = Buffer.concat(chunks);
  return whole.subarray(0, whole.length - END_OF_ARCHIVE);
}

const padded = (size: number): number => Math.ceil(size / BLOCK) * BLOCK;

type Planned =
  | { readonly kind: 'ustar'; readonly name: string; readonly prefix: string; readonly size: number }
  | { readonly kind: 'whole'; readonly bytes: Buffer };

/** A complete tar archive (with its end-of-archive blocks) of the entries, in order. */
export async function tarOf(entries: Iterable<TarEntry>, options: { mtime: Date }): Promise<Uint8Array> {
  const list = [...entries];
  const planned: Planned[] = [];
  let total = END_OF_ARCHIVE;
  let previous: string | Uint8Array | undefined;
  let previousSize = 0;
  for (const entry of list) {
    // An item's copies (its preferred-version entry) share one body: measured once.
    const size =
      entry.body === previous
        ? previousSize
        : typeof entry.body === 'string'
          ? Buffer.byteLength(entry.body)
          : entry.body.byteLength;
    previous = entry.body;
    previousSize = size;
    const fits = size <= MAX_OCTAL_SIZE ? ustarName(entry.name) : undefined;
    if (fits) {
      planned.push({ kind: 'ustar', ...fits, size });
      total += BLOCK + padded(size);
    } else {
      const bytes = await tarStreamEntry(entry, options.mtime);
      planned.push({ kind: 'whole', bytes });
      total += bytes.length;
    }
  }

  const template = headerTemplate(options.mtime);
  // Zero-filled: the padding after each body and the end-of-archive blocks.
  const out = Buffer.alloc(total);
  let offset = 0;
  let written: { body: string | Uint8Array; at: number; size: number } | undefined;
  for (const [index, plan] of planned.entries()) {
    if (plan.kind === 'whole') {
      out.set(plan.bytes, offset);
      offset += plan.bytes.length;
      written = undefined;
      continue;
    }
    const body = (list[index] as TarEntry).body;
    const header = offset;
    out.set(template.block, header);
    out.write(plan.name, header, 'latin1');
    const size = octal(plan.size, 11);
    out.write(size, header + 124, 'latin1');
    if (plan.prefix) out.write(plan.prefix, header + 345, 'latin1');
    const sum = template.sum + byteSum(plan.name) + byteSum(size) + byteSum(plan.prefix);
    out.write(octal(sum, 6), header + 148, 'latin1');
    offset += BLOCK;
    if (written && written.body === body) out.copyWithin(offset, written.at, written.at + written.size);
    else if (typeof body === 'string') out.write(body, offset, 'utf8');
    else out.set(body, offset);
    written = { body, at: offset, size: plan.size };
    offset += padded(plan.size);
  }
  return out;
}
