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

  it.each(['', 'forever', '10', '1d', 'h', '5m trailing', '.s', '-', '1.5.5s'])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it.each([
    ['.5h', 1_800_000],
    ['1.h', 3_600_000],
    ['1h0.5m', 3_630_000],
    ['2μs', 0.002],
    ['2µs', 0.002],
    ['+5s', 5000],
  ])('reads %s as Go does (%d ms)', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 6);
  });

  it('reads the longest durations Go holds, either way', () => {
    expect(parseDuration('2562047h47m16.854775807s')).toBeCloseTo(9_223_372_036_854.775, 1);
    expect(parseDuration('-2562047h47m16.854775808s')).toBeCloseTo(-9_223_372_036_854.775, 1);
  });

  it.each([
    '9999999999999999999h',
    '2562048h',
    '2562047h47m16.854775808s',
    '9223372036854775808ns',
    '99999999999999999999999999s',
    '2562047.9h',
  ])('refuses %s, past what a Go duration holds (about 292 years), as time.ParseDuration does', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it('formats as Go prints durations', () => {
    expect(formatDuration(720 * 3_600_000)).toBe('720h0m0s');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(0)).toBe('0s');
  });
});
