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

/**
 * Writes ASCII `text` at `at` and returns the sum of its bytes (its share of the header
 * checksum): a byte loop beats Buffer#write's argument handling on a header's short fields.
 */
function writeAscii(out: Buffer, text: string, at: number): number {
  let sum = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    out[at + i] = code;
    sum += code;
  }
  return sum;
}

/** `octal(value, digits)` written at `at` (digits then a space); returns the sum of its bytes. */
function writeOctal(out: Buffer, value: number, options: { digits: number; at: number }): number {
  const { digits, at } = options;
  if (value >= 8 ** digits) return writeAscii(out, octal(value, digits), at);
  out[at + digits] = 0x20;
  let sum = 0x20;
  let rest = value;
  for (let i = digits - 1; i >= 0; i--) {
    const code = 0x30 + (rest % 8);
    out[at + i] = code;
    sum += code;
    rest = Math.floor(rest / 8);
  }
  return sum;
}

/** Whether `name` fits a ustar name field as it is: ASCII and at most 100 bytes. */
function plainName(name: string): boolean {
  if (name.length > 100) return false;
  for (let i = 0; i < name.length; i++) if (name.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Where an entry's header fields come from: the name as it is, split, or tar-stream's bytes. */
type Layout = { readonly name: string; readonly prefix: string } | { readonly whole: Buffer };

/** A complete tar archive (with its end-of-archive blocks) of the entries, in order. */
export async function tarOf(entries: Iterable<TarEntry>, options: { mtime: Date }): Promise<Uint8Array> {
  const list = Array.isArray(entries) ? (entries as readonly TarEntry[]) : [...entries];
  const measured = await measuredEntries(list, options.mtime);
  return writtenArchive({ list, measured, mtime: options.mtime });
}

/** What the first pass learns: each body's size, the entries not plain, the archive's size. */
interface MeasuredEntries {
  readonly sizes: readonly number[];
  /** Only entries whose name is not plain (split into a prefix, or a pax header) have a layout. */
  readonly layouts: ReadonlyMap<number, Layout>;
  readonly total: number;
}

/** Sizes every entry (and has tar-stream write those a ustar header cannot hold), so one buffer fits all. */
async function measuredEntries(list: readonly TarEntry[], mtime: Date): Promise<MeasuredEntries> {
  const sizes = new Array<number>(list.length);
  const layouts = new Map<number, Layout>();
  let total = END_OF_ARCHIVE;
  let previous: string | Uint8Array | undefined;
  let previousSize = 0;
  for (let index = 0; index < list.length; index++) {
    const entry = list[index] as TarEntry;
    // An item's copies (its preferred-version entry) share one body: measured once.
    const size =
      entry.body === previous
        ? previousSize
        : typeof entry.body === 'string'
          ? Buffer.byteLength(entry.body)
          : entry.body.byteLength;
    previous = entry.body;
    previousSize = size;
    sizes[index] = size;
    if (size <= MAX_OCTAL_SIZE && plainName(entry.name)) {
      total += BLOCK + padded(size);
      continue;
    }
    const fits = size <= MAX_OCTAL_SIZE ? ustarName(entry.name) : undefined;
    if (fits) {
      layouts.set(index, fits);
      total += BLOCK + padded(size);
    } else {
      const whole = await tarStreamEntry(entry, mtime);
      layouts.set(index, { whole });
      total += whole.length;
    }
  }
  return { sizes, layouts, total };
}

/** Writes every entry's header and body (or tar-stream's bytes) into one buffer of the measured size. */
function writtenArchive(options: {
  list: readonly TarEntry[];
  measured: MeasuredEntries;
  mtime: Date;
}): Buffer {
  const { list } = options;
  const { sizes, layouts, total } = options.measured;
  const template = headerTemplate(options.mtime);
  // Zero-filled: the padding after each body and the end-of-archive blocks.
  const out = Buffer.alloc(total);
  let offset = 0;
  let written: string | Uint8Array | undefined;
  let writtenAt = 0;
  for (let index = 0; index < list.length; index++) {
    const entry = list[index] as TarEntry;
    const layout = layouts.get(index);
    if (layout && 'whole' in layout) {
      out.set(layout.whole, offset);
      offset += layout.whole.length;
      written = undefined;
      continue;
    }
    const size = sizes[index] as number;
    const header = offset;
    out.set(template.block, header);
    let sum = template.sum + writeAscii(out, layout ? layout.name : entry.name, header);
    if (layout?.prefix) sum += writeAscii(out, layout.prefix, header + 345);
    sum += writeOctal(out, size, { digits: 11, at: header + 124 });
    writeOctal(out, sum, { digits: 6, at: header + 148 });
    offset += BLOCK;
    const { body } = entry;
    if (written === body) out.copyWithin(offset, writtenAt, writtenAt + size);
    else if (typeof body === 'string') out.write(body, offset, 'utf8');
    else out.set(body, offset);
    written = body;
    writtenAt = offset;
    offset += padded(size);
  }
  return out;
}
