/**
 * Wraps the repository's data key (envelope encryption): the data key encrypts the repository,
 * the key wrapper's own key (a KMS key, or a local key file for `lifeboat --local`) encrypts the
 * data key, which is stored wrapped in the repository's format object. The plaintext data key
 * never leaves the process and never goes into a log or an error.
 */

export interface WrappedDataKey {
  /** The new data key in plaintext (32 bytes): used, never stored. */
  readonly plaintext: Uint8Array;
  /** The same key wrapped, as stored in the format object. */
  readonly wrapped: Uint8Array;
}

export interface KeyWrapperScheme {
  /** `aws-kms` or `local-key-file`: recorded in the format object, checked on open. */
  readonly scheme: string;
  /** The wrapping key's identity (a KMS key ARN or alias; a local key's fingerprint). */
  readonly keyId: string;
}

export interface KeyWrapper extends KeyWrapperScheme {
  /**
   * A new 256-bit data key. `context` is bound to the wrapped key (KMS encryption context, or
   * associated data): unwrapping needs the same context.
   */
  generateDataKey(options: {
    context: Readonly<Record<string, string>>;
    signal?: AbortSignal;
  }): Promise<WrappedDataKey>;
  unwrap(options: {
    wrapped: Uint8Array;
    context: Readonly<Record<string, string>>;
    signal?: AbortSignal;
  }): Promise<Uint8Array>;
}
