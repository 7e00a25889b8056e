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

const BARE = /^[A-Za-z0-9_./:@-]+$/;

function quote(value: string | number | boolean): string {
  const text = typeof value === 'string' ? value : String(value);
  return BARE.test(text) ? text : JSON.stringify(text);
}

function inByteOrder(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i++) if ((keys[i - 1] as string) >= (keys[i] as string)) return false;
  return true;
}

/**
 * One event as a line, its fields in byte order as logrus sorts keys. The hot events (a backup's
 * 'Backed up item' lines, one per item) are built with their fields in that order and skip the sort.
 */
export function formatLogLine(event: LogEvent): string {
  let line = `time="${event.time}" level=${event.level} msg=${JSON.stringify(event.msg)}`;
  const { fields } = event;
  if (fields === undefined) return line;
  const keys = Object.keys(fields);
  // The default sort compares UTF-16 code units, as `<` does.
  if (!inByteOrder(keys)) keys.sort();
  for (const key of keys) line += ` ${key}=${quote(fields[key] as string | number | boolean)}`;
  return line;
}

export function countLevels(events: readonly LogEvent[]): { errors: number; warnings: number } {
  let errors = 0;
  let warnings = 0;
  for (const { level } of events) {
    if (level === 'error') errors++;
    else if (level === 'warning') warnings++;
  }
  return { errors, warnings };
}

/** Events as log text, one line each, with their error and warning counts. */
export function logTextOf(events: readonly LogEvent[]): {
  text: string;
  levels: { errors: number; warnings: number };
} {
  let text = '';
  for (const event of events) text += `${formatLogLine(event)}\n`;
  return { text, levels: countLevels(events) };
}
