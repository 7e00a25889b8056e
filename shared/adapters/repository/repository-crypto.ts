/**
 * The repository's cryptography and compression: keys derived from the data key with HKDF-SHA256
 * (one for blob ids, one for encryption), blob ids as HMAC-SHA256 of the plaintext's SHA-256 (keyed,
 * so ids do not reveal content hashes; a caller that has checked the SHA-256 already, as block mode
 * has against the checksum EBS sends, passes it and the data is hashed once), AES-256-GCM sealing with a random 96-bit nonce per object and the
 * object's identity as associated data (a record moved to another id or key fails its tag), and
 * raw deflate that is skipped when a sample's byte statistics show the data does not compress.
 * Never: a key or plaintext in an error message, a nonce reused on purpose.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { constants, deflateRaw, deflateRawSync, inflateRaw, inflateRawSync } from 'node:zlib';
import { asciiBytes } from '../../domain/repository/bytes.js';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Bytes sealing adds: nonce and tag. */
export const SEAL_OVERHEAD = NONCE_BYTES + TAG_BYTES;

const deflateAsync = promisify(deflateRaw);
const inflateAsync = promisify(inflateRaw);
const SAMPLE_BYTES = 4096;
/**
 * Bits of information per byte (order-0 entropy, bias-corrected) from which deflate cannot save
 * 5 %: random or already compressed data measures about 8, text about 4.5, JSON logs about 5.
 */
const INCOMPRESSIBLE_BITS = 7.5;
/** Below this, compression costs more than it saves in requests and bytes. */
const MIN_COMPRESS_BYTES = 256;
/**
 * Up to this size a blob is deflated or inflated on this thread: a round trip to libuv's pool
 * (a zlib stream, callbacks, a promise) costs more than the work (a restore of 2,000 small files
 * spent more time in zlib's callbacks than in inflating).
 */
const SYNC_BYTES = 64 * 1024;
/** zlib's smallest output chunk. */
const MIN_ZLIB_CHUNK = 64;

export class OpenFailed extends Error {
  constructor() {
    super('authentication failed');
    this.name = 'OpenFailed';
  }
}

/** Nonces drawn from the CSPRNG at once: one call per 1,024 records, not one per record. */
const NONCES_AT_ONCE = 1024;

export class RepositoryCrypto {
  private readonly idKey: Buffer;
  private readonly encryptionKey: Buffer;
  /** Random bytes not handed out yet; never written after they are drawn (records keep views). */
  private nonces = Buffer.alloc(0);
  private noncesUsed = 0;

  constructor(options: { dataKey: Uint8Array; repositoryId: string }) {
    const salt = Buffer.from(options.repositoryId, 'hex');
    const derive = (info: string): Buffer =>
      Buffer.from(hkdfSync('sha256', options.dataKey, salt, Buffer.from(info), 32));
    this.idKey = derive('lifeboat repository blob-id');
    this.encryptionKey = derive('lifeboat repository encryption');
  }

  blobId(data: Uint8Array): string {
    return this.blobIdOfSha256(createHash('sha256').update(data).digest());
  }

  /** The id of data whose SHA-256 (32 bytes) the caller computed from those very bytes. */
  blobIdOfSha256(sha256: Uint8Array): string {
    if (sha256.length !== 32) throw new RangeError(`a SHA-256 digest has 32 bytes, not ${sha256.length}`);
    return createHmac('sha256', this.idKey).update(sha256).digest('hex');
  }

  /** A fresh random nonce (a draw of the CSPRNG cost ~25 us a record, as much as sealing 16 KiB). */
  private nonce(): Buffer {
    if (this.noncesUsed + NONCE_BYTES > this.nonces.length) {
      this.nonces = randomBytes(NONCE_BYTES * NONCES_AT_ONCE);
      this.noncesUsed = 0;
    }
    const nonce = this.nonces.subarray(this.noncesUsed, this.noncesUsed + NONCE_BYTES);
    this.noncesUsed += NONCE_BYTES;
    return nonce;
  }

  /** The sealed form as its parts (nonce, ciphertext, tag), so a pack copies a record once. */
  sealParts(plaintext: Uint8Array, associatedData: Uint8Array): Uint8Array[] {
    const nonce = this.nonce();
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, nonce);
    cipher.setAAD(associatedData);
    const body = cipher.update(plaintext);
    const final = cipher.final();
    return final.length > 0 ? [nonce, body, final, cipher.getAuthTag()] : [nonce, body, cipher.getAuthTag()];
  }

  seal(plaintext: Uint8Array, associatedData: Uint8Array): Uint8Array {
    return Buffer.concat(this.sealParts(plaintext, associatedData));
  }

  /** The plaintext, or OpenFailed when the tag does not match (tampered, truncated, moved). */
  open(sealed: Uint8Array, associatedData: Uint8Array): Uint8Array {
    if (sealed.length < SEAL_OVERHEAD) throw new OpenFailed();
    const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, sealed.subarray(0, NONCE_BYTES));
    decipher.setAAD(associatedData);
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      const body = decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES));
      return Buffer.concat([body, decipher.final()]);
    } catch {
      throw new OpenFailed();
    }
  }
}

/** Associated data binding a sealed object to what it is. */
export const objectAad = (role: 'pack-header' | 'index' | 'snapshot', id: string): Uint8Array =>
  asciiBytes(`lifeboat ${role} ${id}`);

/** Counts the bytes of `data[start, end)` into `counts`. */
function countBytes(counts: Uint32Array, data: Uint8Array, start: number, end: number): void {
  for (let i = start; i < end; i++) counts[data[i] as number] = (counts[data[i] as number] as number) + 1;
}

/**
 * Whether deflating is worth trying: the byte frequencies of three 4 KiB samples (start, middle,
 * end; the whole blob when smaller) carry fewer bits per byte than INCOMPRESSIBLE_BITS. Counting
 * bytes costs a few microseconds where deflating a sample of random data cost about a hundred, and
 * a backup of many small random files paid that for each.
 */
function worthCompressing(data: Uint8Array): boolean {
  if (data.length < MIN_COMPRESS_BYTES) return false;
  const counts = new Uint32Array(256);
  let sampled = data.length;
  if (data.length <= 3 * SAMPLE_BYTES) countBytes(counts, data, 0, data.length);
  else {
    const middle = Math.floor(data.length / 2 - SAMPLE_BYTES / 2);
    for (const start of [0, middle, data.length - SAMPLE_BYTES])
      countBytes(counts, data, start, start + SAMPLE_BYTES);
    sampled = 3 * SAMPLE_BYTES;
  }
  let bits = 0;
  let distinct = 0;
  for (const count of counts) {
    if (count === 0) continue;
    distinct++;
    const p = count / sampled;
    bits -= p * Math.log2(p);
  }
  // Miller–Madow: a sample underestimates entropy by about (distinct - 1) / 2n nats.
  const corrected = bits + (distinct - 1) / (2 * sampled * Math.LN2);
  return corrected < INCOMPRESSIBLE_BITS;
}

/** The stored form: deflated when that makes it smaller, otherwise the data itself. */
export async function compressBlob(data: Uint8Array): Promise<{ bytes: Uint8Array; compressed: boolean }> {
  if (!worthCompressing(data)) return { bytes: data, compressed: false };
  // One output buffer as large as the input: what does not shrink is not kept anyway.
  const options = { level: 1, chunkSize: Math.max(MIN_ZLIB_CHUNK, data.length) };
  const deflated =
    data.length <= SYNC_BYTES ? deflateRawSync(data, options) : await deflateAsync(data, options);
  return deflated.length < data.length
    ? { bytes: deflated, compressed: true }
    : { bytes: data, compressed: false };
}

export async function decompressBlob(options: {
  bytes: Uint8Array;
  compressed: boolean;
  rawLength: number;
}): Promise<Uint8Array> {
  if (!options.compressed) return options.bytes;
  // The plaintext length is known: a record inflating past it is corrupt, never a memory bomb.
  const inflateOptions = {
    maxOutputLength: Math.max(1, options.rawLength),
    finishFlush: constants.Z_SYNC_FLUSH,
    // One output buffer for the whole plaintext (and room to see its end): no pieces to join.
    chunkSize: Math.max(MIN_ZLIB_CHUNK, options.rawLength + MIN_ZLIB_CHUNK),
  };
  return options.rawLength <= SYNC_BYTES
    ? inflateRawSync(options.bytes, inflateOptions)
    : inflateAsync(options.bytes, inflateOptions);
}
