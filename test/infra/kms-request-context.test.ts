/**
 * The rehearsal's KMS condition keys (test/rehearsal/kms-requests.ts), evaluated by the IAM
 * simulator the rehearsal uses, its encryption-context conditions decided first
 * (kms-context-conditions.ts): a statement conditioned on the repository's encryption context
 * (as the data mover's task role has) allows GenerateDataKey and Decrypt only with it.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { describe, expect, it } from 'vitest';
import { withEncryptionContextDecided } from '../rehearsal/kms-context-conditions.js';
import { kmsRequestContext } from '../rehearsal/kms-requests.js';

const KEY = 'arn:aws:kms:us-east-1:123456789012:key/0b3c4d5e-1111-2222-3333-444455556666';
const ROLE = 'arn:aws:iam::123456789012:role/data-mover';

async function allowed(action: string, context: Record<string, string | string[]> | undefined) {
  const response = await runSimulation(
    {
      request: {
        principal: 'arn:aws:sts::123456789012:assumed-role/data-mover/rehearsal',
        action,
        resource: { resource: KEY, accountId: '123456789012' },
        contextVariables: { 'aws:PrincipalArn': ROLE, ...context },
      },
      identityPolicies: withEncryptionContextDecided(
        [
          {
            name: 'task',
            policy: {
              Version: '2012-10-17',
              Statement: [
                {
                  Effect: 'Allow',
                  Action: ['kms:GenerateDataKey', 'kms:Decrypt'],
                  Resource: KEY,
                  Condition: { StringLike: { 'kms:EncryptionContext:lifeboat:repository': '*' } },
                },
              ],
            },
          },
        ],
        context,
      ),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      // The default key policy: the account's IAM policies decide.
      resourcePolicy: {
        Version: '2012-10-17',
        Statement: [
          {
            Effect: 'Allow',
            Principal: { AWS: 'arn:aws:iam::123456789012:root' },
            Action: 'kms:*',
            Resource: '*',
          },
        ],
      },
    } as never,
    {},
  );
  return response.resultType === 'error' ? 'error' : response.overallResult;
}

describe('the rehearsal’s KMS request context', () => {
  it('names each encryption-context pair and their keys', () => {
    expect(
      kmsRequestContext('GenerateDataKey', {
        KeyId: KEY,
        EncryptionContext: { 'lifeboat:repository': 'r-1' },
      }),
    ).toEqual({
      'kms:EncryptionContext:lifeboat:repository': 'r-1',
      'kms:EncryptionContextKeys': ['lifeboat:repository'],
    });
    expect(kmsRequestContext('Decrypt', { CiphertextBlob: 'AAAA' })).toBeUndefined();
  });

  it('lets a statement conditioned on the repository’s context allow the call only with it', async () => {
    const withContext = kmsRequestContext('GenerateDataKey', {
      EncryptionContext: { 'lifeboat:repository': 'r-1' },
    });
    expect(await allowed('kms:GenerateDataKey', withContext)).toBe('Allowed');
    expect(
      await allowed(
        'kms:Decrypt',
        kmsRequestContext('Decrypt', { EncryptionContext: { 'lifeboat:repository': 'r-1' } }),
      ),
    ).toBe('Allowed');
    expect(await allowed('kms:GenerateDataKey', kmsRequestContext('GenerateDataKey', {}))).not.toBe(
      'Allowed',
    );
    expect(
      await allowed(
        'kms:GenerateDataKey',
        kmsRequestContext('GenerateDataKey', { EncryptionContext: { other: 'x' } }),
      ),
    ).not.toBe('Allowed');
  });
});
