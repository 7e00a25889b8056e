/**
 * Go `time.Duration` strings as Velero's API carries them (`720h`, `1h30m`, `720h0m0s`, `10m`):
 * parsing to milliseconds and formatting back the way Go prints them.
 */

/** Nanoseconds per unit, as Go's time package spells units (both micro signs included). */
const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  '\u00b5s': 1_000n,
  '\u03bcs': 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** A Go Duration is an int64 of nanoseconds: about 292 years either way. */
const MAX_NS = (1n << 63n) - 1n;

/** One `<number><unit>` term of a duration: its nanoseconds, and the text after it. */
function term(text: string): { ns: bigint; rest: string } | undefined {
  const number = /^(\d*)(?:\.(\d*))?/.exec(text);
  const whole = number?.[1] ?? '';
  const fraction = number?.[2];
  if (whole === '' && !fraction) return undefined;
  const rest = text.slice(number?.[0].length ?? 0);
  const unitText = /^[^\d.]+/.exec(rest)?.[0] ?? '';
  const unit = UNIT_NS[unitText];
  if (unit === undefined) return undefined;
  const v = BigInt(whole || '0');
  if (v > (1n << 63n) / unit) return undefined;
  let ns = v * unit;
  if (fraction) {
    // As Go's leadingFraction: digits past int64 precision are dropped, then scaled as a float.
    let f = 0n;
    let scale = 1;
    for (const digit of fraction) {
      if (f > MAX_NS / 10n) break;
      f = f * 10n + BigInt(digit);
      scale *= 10;
    }
    ns += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
    if (ns > 1n << 63n) return undefined;
  }
  return { ns, rest: rest.slice(unitText.length) };
}

/**
 * Milliseconds, or undefined when the text is not a Go duration: Go's `time.ParseDuration`
 * grammar, including its overflow rule (nothing past an int64 of nanoseconds).
 */
export function parseDuration(text: string): number | undefined {
  const negative = text.startsWith('-');
  let body = negative || text.startsWith('+') ? text.slice(1) : text;
  if (body === '0') return 0;
  if (body === '') return undefined;
  let total = 0n;
  while (body !== '') {
    const next = term(body);
    if (!next) return undefined;
    total += next.ns;
    if (total > 1n << 63n) return undefined;
    body = next.rest;
  }
  if (!negative && total > MAX_NS) return undefined;
  const ms = Number(total) / 1e6;
  return negative ? -ms : ms;
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
