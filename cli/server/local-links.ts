/**
 * Download links of `lifeboat server --local`, the stand-in for S3's presigned URLs: a link to
 * the server's own `/downloads/<key>` route, signed with a secret the server draws at start
 * (HMAC-SHA256 of the key and expiry), so whoever holds the link fetches that one object until it
 * expires, without the API token. Verified in constant time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { DownloadLinks } from '../../shared/ports/download-links.js';

export const DOWNLOADS_PATH = '/downloads/';

export class LocalDownloadLinks implements DownloadLinks {
  private readonly secret = randomBytes(32);

  /** `base`: the server's address, known once it listens. */
  constructor(private readonly base: () => string) {}

  private signature(key: string, expires: number): Buffer {
    return createHmac('sha256', this.secret).update(`${key}\n${expires}`).digest();
  }

  async link(options: { key: string; expiresInSeconds: number }): Promise<string> {
    const expires = Math.floor(Date.now() / 1000) + options.expiresInSeconds;
    const path = options.key.split('/').map(encodeURIComponent).join('/');
    const signature = this.signature(options.key, expires).toString('base64url');
    return `${this.base()}${DOWNLOADS_PATH}${path}?expires=${expires}&signature=${signature}`;
  }

  /** The key a link names, if the link is one of ours and has not expired. */
  verify(url: URL): string | undefined {
    if (!url.pathname.startsWith(DOWNLOADS_PATH)) return undefined;
    const key = url.pathname.slice(DOWNLOADS_PATH.length).split('/').map(decodeURIComponent).join('/');
    const expires = Number(url.searchParams.get('expires'));
    const given = Buffer.from(url.searchParams.get('signature') ?? '', 'base64url');
    if (!Number.isInteger(expires) || expires < Date.now() / 1000) return undefined;
    const expected = this.signature(key, expires);
    return given.length === expected.length && timingSafeEqual(given, expected) ? key : undefined;
  }
}
