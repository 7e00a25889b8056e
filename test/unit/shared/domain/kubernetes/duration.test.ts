import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../../../shared/domain/kubernetes/duration.js';

describe('Go durations', () => {
  it.each([
    ['720h', 720 * 3_600_000],
    ['720h0m0s', 720 * 3_600_000],
    ['1h30m', 90 * 60_000],
    ['10m', 600_000],
    ['1.5s', 1500],
    ['300ms', 300],
    ['0', 0],
    ['-1m', -60_000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['', 'forever', '10', '1d', 'h', '5m trailing'])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('formats as Go prints durations', () => {
    expect(formatDuration(720 * 3_600_000)).toBe('720h0m0s');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(0)).toBe('0s');
  });
});
