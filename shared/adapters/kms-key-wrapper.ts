/**
 * Envelope keys from AWS KMS: GenerateDataKey (AES_256) makes the repository's data key, Decrypt
 * unwraps it on every open, both with the repository's id as encryption context (so a wrapped key
 * copied into another repository's format object does not unwrap, and CloudTrail shows which
 * repository asked). The SDK retries throttling and 5xx (`maxAttempts`); what still fails is
 * RetryableError or CloudRequestRefused (access denied, disabled or missing key).
 */
import { DecryptCommand, GenerateDataKeyCommand, KMSClient, KMSServiceException } from '@aws-sdk/client-kms';
import { CloudRequestRefused } from '../domain/errors.js';
import type { KeyWrapper, WrappedDataKey } from '../ports/key-wrapper.js';
import { awsErrorOf } from './aws-errors.js';

const RETRYABLE = new Set([
  'ThrottlingException',
  'KMSInternalException',
  'DependencyTimeoutException',
  'KeyUnavailableException',
]);

function kmsErrorOf(error: unknown, options: { what: string; signal?: AbortSignal }): unknown {
  // The service's message names the key and the operation, never key material.
  return awsErrorOf(error, { ...options, service: KMSServiceException, retryableCodes: RETRYABLE });
}

/**
 * A wrapper with its own client, for callers that load this module on demand: the client comes
 * from this module's static import, as a bundler's code-split dynamic `import()` of the SDK's
 * CommonJS package yields only its `default`, without named exports.
 */
export function kmsKeyWrapperAt(options: { region: string; keyId: string }): KmsKeyWrapper {
  return new KmsKeyWrapper({
    client: new KMSClient({ region: options.region, maxAttempts: 8 }),
    keyId: options.keyId,
  });
}

export class KmsKeyWrapper implements KeyWrapper {
  readonly scheme = 'aws-kms';
  readonly keyId: string;
  private readonly client: KMSClient;

  /** `keyId`: a key id, key ARN, alias name or alias ARN the caller may GenerateDataKey with. */
  constructor(options: { client: KMSClient; keyId: string }) {
    this.client = options.client;
    this.keyId = options.keyId;
  }

  async generateDataKey(options: {
    context: Readonly<Record<string, string>>;
    signal?: AbortSignal;
  }): Promise<WrappedDataKey> {
    try {
      const out = await this.client.send(
        new GenerateDataKeyCommand({
          KeyId: this.keyId,
          KeySpec: 'AES_256',
          EncryptionContext: { ...options.context },
        }),
        { abortSignal: options.signal },
      );
      if (!out.Plaintext || !out.CiphertextBlob || out.Plaintext.length !== 32)
        throw new CloudRequestRefused(
          `KMS GenerateDataKey with ${this.keyId}: no 256-bit data key returned`,
          {
            code: 'InvalidResponse',
          },
        );
      return { plaintext: out.Plaintext, wrapped: out.CiphertextBlob };
    } catch (error) {
      throw kmsErrorOf(error, { what: `KMS GenerateDataKey with ${this.keyId}`, signal: options.signal });
    }
  }

  async unwrap(options: {
    wrapped: Uint8Array;
    context: Readonly<Record<string, string>>;
    signal?: AbortSignal;
  }): Promise<Uint8Array> {
    try {
      // No KeyId: the ciphertext names its key, so a repository opened with another alias or from
      // another account (with a grant on the key) still unwraps.
      const out = await this.client.send(
        new DecryptCommand({ CiphertextBlob: options.wrapped, EncryptionContext: { ...options.context } }),
        { abortSignal: options.signal },
      );
      if (out.Plaintext?.length !== 32)
        throw new CloudRequestRefused('KMS Decrypt of the repository data key: no 256-bit key returned', {
          code: 'InvalidResponse',
        });
      return out.Plaintext;
    } catch (error) {
      throw kmsErrorOf(error, { what: 'KMS Decrypt of the repository data key', signal: options.signal });
    }
  }
}
