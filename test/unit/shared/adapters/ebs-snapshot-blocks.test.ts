import { EBSServiceException } from '@aws-sdk/client-ebs';
import { describe, expect, it } from 'vitest';
import { ebsErrorOf } from '../../../../shared/adapters/ebs-snapshot-blocks.js';
import { CloudRequestRefused, RetryableError } from '../../../../shared/domain/errors.js';

const ebsError = (name: string, status: number, fault: 'client' | 'server' = 'client', reason?: string) =>
  Object.assign(
    new EBSServiceException({
      name,
      $fault: fault,
      $metadata: { httpStatusCode: status },
      message: `${name} happened`,
    }),
    reason ? { Reason: reason } : {},
  );

const networkError = (code: string): Error => Object.assign(new Error(`read ${code}`), { code });

describe('EBS direct API errors', () => {
  it.each([
    ['throttling per snapshot', ebsError('RequestThrottledException', 400)],
    ['too many concurrent requests', ebsError('ConcurrentLimitExceededException', 400)],
    ['an internal error', ebsError('InternalServerException', 500, 'server')],
    ['any 5xx', ebsError('SomethingNew', 503, 'server')],
    ['a 429', ebsError('SomethingElse', 429)],
    ['a body cut off', networkError('ECONNRESET')],
    ['a stream closed early', networkError('ERR_STREAM_PREMATURE_CLOSE')],
  ])('are retryable for %s', (_, error) => {
    const mapped = ebsErrorOf(error, { what: 'GetSnapshotBlock snap-1 #3' });
    expect(mapped).toBeInstanceOf(RetryableError);
    expect((mapped as Error).message).toMatch(/^GetSnapshotBlock snap-1 #3: /);
    expect((mapped as Error).cause).toBe(error);
  });

  it.each([
    ['ValidationException', 400, 'INVALID_BLOCK_TOKEN'],
    ['ResourceNotFoundException', 404, 'SNAPSHOT_NOT_FOUND'],
    ['AccessDeniedException', 403, undefined],
    ['ConflictException', 409, undefined],
  ])('are terminal for %s, keeping the code and AWS’s reason', (name, status, reason) => {
    const mapped = ebsErrorOf(ebsError(name, status, 'client', reason), { what: 'ListChangedBlocks a → b' });
    expect(mapped).toBeInstanceOf(CloudRequestRefused);
    expect((mapped as CloudRequestRefused).code).toBe(name);
    if (reason) expect((mapped as Error).message).toContain(`(${reason})`);
  });

  it('passes an abort and a bug through unchanged', () => {
    const controller = new AbortController();
    controller.abort();
    const abort = ebsError('RequestThrottledException', 400);
    expect(ebsErrorOf(abort, { what: 'x', signal: controller.signal })).toBe(abort);
    const bug = new TypeError('undefined is not a function');
    expect(ebsErrorOf(bug, { what: 'x' })).toBe(bug);
  });
});
