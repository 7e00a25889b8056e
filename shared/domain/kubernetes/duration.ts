/**
 * Go `time.Duration` strings as Velero's API carries them (`720h`, `1h30m`, `720h0m0s`, `10m`):
 * parsing to milliseconds and formatting back the way Go prints them.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const TERM = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;

/** Milliseconds, or undefined when the text is not a Go duration. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const body = text.startsWith('-') || text.startsWith('+') ? text.slice(1) : text;
  if (body === '') return undefined;
  TERM.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  for (let m = TERM.exec(body); m !== null; m = TERM.exec(body)) {
    total += Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? Number.NaN);
    consumed = TERM.lastIndex;
  }
  if (consumed !== body.length || Number.isNaN(total)) return undefined;
  return text.startsWith('-') ? -total : total;
}

/** Go's `Duration.String()` for whole seconds: `720h0m0s`, `1m30s`, `0s`. */
export function formatDuration(ms: number): string {
  const totalSeconds = Math.round(ms / 1000);
  if (totalSeconds === 0) return '0s';
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
