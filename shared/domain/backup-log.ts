/**
 * The per-backup log users download (`<name>-logs.gz`): built from structured events, in the
 * logrus text form Velero writes (`time="…" level=info msg="…" key=value`). Never holds
 * secret data: events carry names, not object contents.
 */

export type LogLevel = 'debug' | 'info' | 'warning' | 'error';

export interface LogEvent {
  readonly time: string;
  readonly level: LogLevel;
  readonly msg: string;
  readonly fields?: Readonly<Record<string, string | number | boolean>>;
}

function quote(value: string | number | boolean): string {
  const text = String(value);
  return /^[A-Za-z0-9_./:@-]+$/.test(text) ? text : JSON.stringify(text);
}

export function formatLogLine(event: LogEvent): string {
  const fields = Object.entries(event.fields ?? {})
    // Byte order, as logrus sorts keys (and far cheaper than a locale comparison per line).
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => ` ${k}=${quote(v)}`)
    .join('');
  return `time="${event.time}" level=${event.level} msg=${JSON.stringify(event.msg)}${fields}`;
}

export function countLevels(events: readonly LogEvent[]): { errors: number; warnings: number } {
  return {
    errors: events.filter((e) => e.level === 'error').length,
    warnings: events.filter((e) => e.level === 'warning').length,
  };
}

/** Events as log text, one line each, with their error and warning counts. */
export function logTextOf(events: readonly LogEvent[]): {
  text: string;
  levels: { errors: number; warnings: number };
} {
  return {
    text: events.map((e) => `${formatLogLine(e)}\n`).join(''),
    levels: countLevels(events),
  };
}
