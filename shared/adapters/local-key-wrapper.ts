/**
 * Envelope keys without KMS, for `lifeboat --local` (directory storage): a 256-bit key-encryption
 * key in a file of its own, outside the repository (created, mode 0600, only with the repository
 * it protects: opening an existing repository never makes up a key), wraps the
 * repository's data key with AES-256-GCM; the wrapping context is the associated data. Whoever
 * holds the key file (or a copy) can read the repository; the repository alone is not enough.
 * Never: the key file inside the store, the key in a message.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LifeboatError } from '../domain/errors.js';
import type { KeyWrapper, WrappedDataKey } from '../ports/key-wrapper.js';

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const contextAad = (context: Readonly<Record<string, string>>): Buffer =>
  Buffer.from(JSON.stringify(Object.entries(context).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));

export class LocalKeyWrapper implements KeyWrapper {
  readonly scheme = 'local-key-file';
  /** `sha256:` and the first 16 hex digits of the key's hash: tells keys apart, reveals nothing. */
  readonly keyId: string;
  private readonly key: Buffer;

  constructor(key: Uint8Array) {
    if (key.length !== KEY_BYTES) throw new LifeboatError(`a local repository key has ${KEY_BYTES} bytes`);
    this.key = Buffer.from(key);
    this.keyId = `sha256:${createHash('sha256').update(this.key).digest('hex').slice(0, 16)}`;
  }

  /**
   * The key in `path` (64 hex digits). A missing file is created with a random key only with
   * `create` (the repository is being created); otherwise it is an error naming the path.
   */
  /**
   * `create`: a missing file may be made up; a function is asked only when the file is missing
   * (so a question that costs a request, "is there a repository yet?", is asked only then).
   */
  static async fromFile(
    path: string,
    options: { create?: boolean | (() => Promise<boolean>) } = {},
  ): Promise<LocalKeyWrapper> {
    try {
      return new LocalKeyWrapper(LocalKeyWrapper.parse(path, await readFile(path, 'utf8')));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    const create = typeof options.create === 'function' ? await options.create() : options.create;
    if (!create)
      throw new LifeboatError(
        `the repository key file ${path} does not exist: give this repository's key file with --repository-key-file (or $LIFEBOAT_REPOSITORY_KEY_FILE)`,
      );
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    try {
      // 'wx': two first runs at once cannot both create a key; the loser reads the winner's.
      await writeFile(path, `${randomBytes(KEY_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    return new LocalKeyWrapper(LocalKeyWrapper.parse(path, await readFile(path, 'utf8')));
  }

  private static parse(path: string, text: string): Buffer {
    const hex = text.trim();
    if (!/^[0-9a-fA-F]{64}$/.test(hex))
      throw new LifeboatError(`the repository key file ${path} does not hold 64 hex digits`);
    return Buffer.from(hex, 'hex');
  }

  async generateDataKey(options: { context: Readonly<Record<string, string>> }): Promise<WrappedDataKey> {
    const plaintext = randomBytes(KEY_BYTES);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce);
    cipher.setAAD(contextAad(options.context));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return { plaintext, wrapped: Buffer.concat([nonce, body, cipher.getAuthTag()]) };
  }

  async unwrap(options: {
    wrapped: Uint8Array;
    context: Readonly<Record<string, string>>;
  }): Promise<Uint8Array> {
    const w = Buffer.from(options.wrapped);
    if (w.length !== NONCE_BYTES + KEY_BYTES + TAG_BYTES)
      throw new LifeboatError('the wrapped repository key has the wrong length');
    const decipher = createDecipheriv('aes-256-gcm', this.key, w.subarray(0, NONCE_BYTES));
    decipher.setAAD(contextAad(options.context));
    decipher.setAuthTag(w.subarray(NONCE_BYTES + KEY_BYTES));
    try {
      return Buffer.concat([
        decipher.update(w.subarray(NONCE_BYTES, NONCE_BYTES + KEY_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new LifeboatError(
        `the repository key ${this.keyId} does not unwrap this repository's data key (wrong key file?)`,
      );
    }
  }
}
