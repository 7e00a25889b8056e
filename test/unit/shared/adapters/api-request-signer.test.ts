import { afterEach, describe, expect, it, vi } from 'vitest';
import { sigv4Auth } from '../../../../shared/adapters/api-request-signer.js';

describe('signing a request to a deployment’s API', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('signs for execute-api in the endpoint’s region with the credential chain’s keys, stage path and query included', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY');
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    vi.stubEnv('AWS_PROFILE', '');
    const endpoint = new URL('https://abc123.execute-api.eu-west-1.amazonaws.com/v1');
    const sign = sigv4Auth(endpoint);
    const url = new URL(`${endpoint}/backups?limit=5`);
    const headers = await sign({ method: 'GET', url, headers: { accept: 'application/json' } });
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=accept;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expect(headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    // fetch sets Host itself, to the value signed.
    expect(headers.host).toBeUndefined();
    const withBody = await sign({ method: 'POST', url, headers: {}, body: '{"a":1}' });
    const otherBody = await sign({ method: 'POST', url, headers: {}, body: '{"a":2}' });
    expect(withBody['x-amz-content-sha256']).not.toBe(otherBody['x-amz-content-sha256']);
  });

  it('takes $AWS_REGION for an endpoint that names none, and says so when there is none', () => {
    vi.stubEnv('AWS_REGION', '');
    vi.stubEnv('AWS_DEFAULT_REGION', '');
    expect(() => sigv4Auth(new URL('https://lifeboat.example.com'))).toThrow(/set \$AWS_REGION/);
    vi.stubEnv('AWS_REGION', 'us-west-2');
    expect(() => sigv4Auth(new URL('https://lifeboat.example.com'))).not.toThrow();
  });
});
