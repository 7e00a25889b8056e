/**
 * A KMS request's condition keys, for the rehearsal's gateway: each pair of its
 * `EncryptionContext` as `kms:EncryptionContext:<key>` and their keys as
 * `kms:EncryptionContextKeys` (GenerateDataKey, Decrypt, Encrypt), as KMS gives them to IAM; and
 * CreateGrant's own keys (copy-requests.ts). Nothing is allowed here: the gateway evaluates it.
 */
import { grantContext } from './copy-requests.js';

export function kmsRequestContext(
  operation: string,
  body: Record<string, unknown>,
): Record<string, string | string[]> | undefined {
  if (operation === 'CreateGrant') return grantContext(body);
  const pairs = body.EncryptionContext;
  if (!pairs || typeof pairs !== 'object') return undefined;
  const entries = Object.entries(pairs as Record<string, unknown>).map(([k, v]) => [k, String(v)] as const);
  if (entries.length === 0) return undefined;
  return {
    ...Object.fromEntries(entries.map(([k, v]) => [`kms:EncryptionContext:${k}`, v])),
    'kms:EncryptionContextKeys': entries.map(([k]) => k),
  };
}
