/**
 * Credentials a deployed caller got through the gateway from STS AssumeRole (VolumeOperations
 * assuming a DR account's snapshot-copy role): their access key is held by the assumed role on
 * that caller's behalf, so every call made with them is evaluated against the assumed role's
 * policies, as AWS would, instead of passing as the test's own. Read from moto's answer.
 */
import type { KeyHolder } from './deploy.js';

export class AssumedRoles {
  private readonly held = new Map<string, KeyHolder>();

  /** Records the access key of an AssumeRole answer (STS's XML) as the role's, for the caller. */
  record(options: { by: KeyHolder; roleArn: string; answer: string }): void {
    const key = /<AccessKeyId>([^<]+)<\/AccessKeyId>/.exec(options.answer)?.[1];
    const role = options.roleArn.split('/').pop() ?? options.roleArn;
    if (key) this.held.set(key, { roleArn: options.roleArn, caller: `${options.by.caller} as ${role}` });
  }

  holderOf(accessKeyId: string): KeyHolder | undefined {
    return this.held.get(accessKeyId);
  }
}
