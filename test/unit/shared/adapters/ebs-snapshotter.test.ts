import { EC2ServiceException } from '@aws-sdk/client-ec2';
import { describe, expect, it } from 'vitest';
import { ec2ErrorOf } from '../../../../shared/adapters/ebs-snapshotter.js';
import { CloudRequestRefused, RetryableError } from '../../../../shared/domain/errors.js';

const ec2Error = (name: string, status: number, fault: 'client' | 'server' = 'client') =>
  new EC2ServiceException({
    name,
    $fault: fault,
    $metadata: { httpStatusCode: status },
    message: `${name} happened`,
  });

const networkError = (code: string): Error => Object.assign(new Error(`connect ${code}`), { code });

describe('EC2 errors', () => {
  it.each([
    ['throttling', ec2Error('RequestLimitExceeded', 503)],
    ['a per-volume snapshot rate limit', ec2Error('SnapshotCreationPerVolumeRateExceeded', 400)],
    ['too many snapshots in progress', ec2Error('ConcurrentSnapshotLimitExceeded', 400)],
    ['an internal error', ec2Error('InternalError', 500, 'server')],
    ['any 5xx', ec2Error('SomethingNew', 502, 'server')],
    ['a 429', ec2Error('SomethingElse', 429)],
    ['a reset connection', networkError('ECONNRESET')],
    ['a timed-out connection', networkError('ETIMEDOUT')],
  ])('are retryable for %s', (_, error) => {
    const mapped = ec2ErrorOf(error, { what: 'CreateSnapshot of vol-1' });
    expect(mapped).toBeInstanceOf(RetryableError);
    expect((mapped as RetryableError).retryable).toBe(true);
    expect((mapped as Error).message).toMatch(/^CreateSnapshot of vol-1: /);
    expect((mapped as Error).cause).toBe(error);
  });

  it.each([
    ['InvalidVolume.NotFound', 400],
    ['InvalidParameterValue', 400],
    ['UnauthorizedOperation', 403],
    ['IncorrectState', 400],
  ])('are terminal for %s, keeping the code', (name, status) => {
    const mapped = ec2ErrorOf(ec2Error(name, status), { what: 'DescribeVolumes vol-1' });
    expect(mapped).toBeInstanceOf(CloudRequestRefused);
    expect(mapped).toMatchObject({ name: 'CloudRequestRefused', code: name, retryable: false });
  });

  it('pass an abort and a programming error on unchanged', () => {
    const controller = new AbortController();
    controller.abort();
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(ec2ErrorOf(abort, { what: 'x' })).toBe(abort);
    const throttled = ec2Error('Throttling', 400);
    expect(ec2ErrorOf(throttled, { what: 'x', signal: controller.signal })).toBe(throttled);
    const bug = new TypeError('cannot read properties of undefined');
    expect(ec2ErrorOf(bug, { what: 'x' })).toBe(bug);
  });
});
