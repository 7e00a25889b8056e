/**
 * Opens the repository's format object, or creates it on first use: a new repository id, a data
 * key from the key wrapper (bound to the id), the parameters, written once with ifNoneMatch. Two
 * first writers at once: the loser reads the winner's object and uses its key.
 */
import { randomBytes } from 'node:crypto';
import {
  type FileChunking,
  REPOSITORY_FORMAT_VERSION,
  REPOSITORY_KIND,
  type RepositoryFormat,
  repositoryFormatHead,
  repositoryFormatSchema,
} from '../../contracts/repository.js';
import { AlreadyExists, RepositoryFormatUnsupported, RepositoryObjectCorrupt } from '../../domain/errors.js';
import { repositoryKeys } from '../../domain/storage/keys.js';
import type { KeyWrapper } from '../../ports/key-wrapper.js';
import type { ObjectStore } from '../../ports/object-store.js';
import { RepositoryCrypto } from './repository-crypto.js';

export const DEFAULT_PACK_TARGET_BYTES = 16 * 1024 * 1024;
export const DEFAULT_MAX_BLOB_BYTES = 32 * 1024 * 1024;

export interface NewRepositoryParameters {
  readonly packTargetBytes?: number;
  readonly maxBlobBytes?: number;
  readonly fileChunking?: FileChunking;
}

const keyContext = (repositoryId: string): Record<string, string> => ({
  'lifeboat:repository': repositoryId,
});

function parseFormat(bytes: Uint8Array): RepositoryFormat {
  const key = repositoryKeys.format;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (error) {
    throw new RepositoryObjectCorrupt(key, 'not JSON', { cause: error });
  }
  const head = repositoryFormatHead.safeParse(json);
  if (!head.success) throw new RepositoryObjectCorrupt(key, 'no kind and formatVersion');
  if (head.data.kind !== REPOSITORY_KIND) throw new RepositoryFormatUnsupported(`kind "${head.data.kind}"`);
  if (head.data.formatVersion !== REPOSITORY_FORMAT_VERSION)
    throw new RepositoryFormatUnsupported(
      `format version ${head.data.formatVersion} (this version reads ${REPOSITORY_FORMAT_VERSION})`,
    );
  const parsed = repositoryFormatSchema.safeParse(json);
  if (!parsed.success)
    throw new RepositoryFormatUnsupported(
      parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '),
    );
  return parsed.data;
}

async function unlock(options: {
  format: RepositoryFormat;
  keys: KeyWrapper;
  signal?: AbortSignal;
}): Promise<RepositoryCrypto> {
  const { format, keys } = options;
  if (format.keyWrapping.scheme !== keys.scheme)
    throw new RepositoryFormatUnsupported(
      `its data key is wrapped with ${format.keyWrapping.scheme} (${format.keyWrapping.keyId}), this run has a ${keys.scheme} key`,
    );
  const dataKey = await keys.unwrap({
    wrapped: Buffer.from(format.keyWrapping.wrappedKey, 'base64'),
    context: keyContext(format.repositoryId),
    signal: options.signal,
  });
  return new RepositoryCrypto({ dataKey, repositoryId: format.repositoryId });
}

export async function openFormat(options: {
  store: ObjectStore;
  keys: KeyWrapper;
  create?: NewRepositoryParameters;
  now: Date;
  signal?: AbortSignal;
}): Promise<{ format: RepositoryFormat; crypto: RepositoryCrypto; created: boolean }> {
  const { store, keys, signal } = options;
  const existing = await store.get(repositoryKeys.format, { signal });
  if (existing) {
    const format = parseFormat(existing);
    return { format, crypto: await unlock({ format, keys, signal }), created: false };
  }
  const repositoryId = randomBytes(16).toString('hex');
  const dataKey = await keys.generateDataKey({ context: keyContext(repositoryId), signal });
  const format: RepositoryFormat = repositoryFormatSchema.parse({
    kind: REPOSITORY_KIND,
    formatVersion: REPOSITORY_FORMAT_VERSION,
    repositoryId,
    createdAt: options.now.toISOString(),
    blobId: 'HMAC-SHA256(SHA-256)',
    keyDerivation: 'HKDF-SHA256',
    encryption: 'AES-256-GCM',
    compression: 'deflate-raw',
    packTargetBytes: options.create?.packTargetBytes ?? DEFAULT_PACK_TARGET_BYTES,
    maxBlobBytes: options.create?.maxBlobBytes ?? DEFAULT_MAX_BLOB_BYTES,
    ...(options.create?.fileChunking ? { fileChunking: options.create.fileChunking } : {}),
    keyWrapping: {
      scheme: keys.scheme,
      keyId: keys.keyId,
      wrappedKey: Buffer.from(dataKey.wrapped).toString('base64'),
    },
  });
  try {
    await store.put(repositoryKeys.format, `${JSON.stringify(format, null, 2)}\n`, {
      ifNoneMatch: true,
      contentType: 'application/json',
      signal,
    });
  } catch (error) {
    if (!(error instanceof AlreadyExists)) throw error;
    const winner = await store.get(repositoryKeys.format, { signal });
    if (!winner) throw error;
    const format = parseFormat(winner);
    return { format, crypto: await unlock({ format, keys, signal }), created: false };
  }
  return {
    format,
    crypto: new RepositoryCrypto({ dataKey: dataKey.plaintext, repositoryId }),
    created: true,
  };
}
