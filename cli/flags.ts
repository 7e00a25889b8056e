/**
 * The flags of the `lifeboat` verbs: how each is described (for parsing, the usage text and
 * shell completion alike), how a verb's command line is parsed against them (node:util's
 * parseArgs, with Velero's optional booleans: `--flag`, `--flag=false` or `--flag false`), and
 * the usage errors that name the flag at fault. Imports nothing heavy: `lifeboat --help` loads it.
 */
import { parseArgs } from 'node:util';

/** The command line is wrong: exit status 2, the message names the flag or operand. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** What a shell completes a flag's value with (see completion.ts). */
export type Completion = readonly string[] | 'files' | 'dirs' | 'backups' | 'restores' | 'contexts';

export interface FlagSpec {
  /** `optional-boolean`: Velero's, true when given alone, or `=true|false`. */
  readonly type: 'string' | 'boolean' | 'optional-boolean';
  readonly short?: string;
  /** What the value is, in the usage text (`DIR`, `a,b`). */
  readonly value?: string;
  readonly help: string;
  readonly complete?: Completion;
}

export type FlagSet = Readonly<Record<string, FlagSpec>>;

export type FlagValues<F extends FlagSet> = {
  readonly [K in keyof F]?: F[K]['type'] extends 'string' ? string : boolean;
};

/** `a,b , c` → ['a', 'b', 'c']; undefined stays undefined. */
export function csv(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

/** `--flag` and `--flag true|false` of an optional boolean as `--flag=…`, for parseArgs. */
function withOptionalBooleans(flags: FlagSet, args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (!arg.startsWith('--') || arg.includes('=') || flags[arg.slice(2)]?.type !== 'optional-boolean') {
      out.push(arg);
      continue;
    }
    const next = args[i + 1];
    const value = next === 'true' || next === 'false' ? next : 'true';
    if (value === next) i++;
    out.push(`${arg}=${value}`);
  }
  return out;
}

/** The closest flag name to a mistyped one, if it is close. */
function closest(name: string, flags: FlagSet): string | undefined {
  const distance = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++)
        next[j] = Math.min(
          (row[j] ?? 0) + 1,
          (next[j - 1] ?? 0) + 1,
          (row[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1),
        );
      row = next;
    }
    return row[b.length] ?? Number.POSITIVE_INFINITY;
  };
  const ranked = Object.keys(flags)
    .map((flag) => ({ flag, d: distance(name, flag) }))
    .sort((a, b) => a.d - b.d)[0];
  return ranked && ranked.d <= Math.max(2, Math.floor(name.length / 4)) ? ranked.flag : undefined;
}

/** parseArgs' own errors, said in the verb's words. */
function usageErrorOf(options: { error: unknown; flags: FlagSet; command: string }): UsageError | undefined {
  const { error, flags, command } = options;
  const code = (error as { code?: unknown }).code;
  if (!(error instanceof Error) || typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) return;
  const flag = /'(-{1,2}[^' =]+)/.exec(error.message)?.[1] ?? '';
  const help = `see lifeboat ${command} --help`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const near = flag.startsWith('--') ? closest(flag.slice(2), flags) : undefined;
    return new UsageError(`unknown flag ${flag}${near ? ` (did you mean --${near}?)` : ''}; ${help}`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return new UsageError(
      error.message.includes('does not take an argument')
        ? `${flag} takes no value; ${help}`
        : `${flag} needs a value; ${help}`,
    );
  return new UsageError(`${error.message}; ${help}`);
}

/** Optional booleans' text as booleans, anything but true or false refused by name. */
function booleansOf(flags: FlagSet, values: Record<string, unknown>): Record<string, unknown> {
  const out = { ...values };
  for (const [name, spec] of Object.entries(flags)) {
    const value = values[name];
    if (spec.type !== 'optional-boolean' || value === undefined) continue;
    if (value !== 'true' && value !== 'false')
      throw new UsageError(`--${name} must be true or false, not ${JSON.stringify(value)}`);
    out[name] = value === 'true';
  }
  return out;
}

/** A verb's command line: its flags' values and its operands, every mistake a UsageError. */
export function parseFlags<F extends FlagSet>(options: {
  readonly command: string;
  readonly flags: F;
  readonly args: readonly string[];
}): { values: FlagValues<F>; operands: string[] } {
  const { flags, command } = options;
  const parseOptions = Object.fromEntries(
    Object.entries(flags).map(([name, spec]) => [
      name,
      {
        type: spec.type === 'boolean' ? ('boolean' as const) : ('string' as const),
        ...(spec.short ? { short: spec.short } : {}),
      },
    ]),
  );
  try {
    const parsed = parseArgs({
      args: withOptionalBooleans(flags, options.args),
      options: parseOptions,
      allowPositionals: true,
      strict: true,
    });
    return { values: booleansOf(flags, parsed.values) as FlagValues<F>, operands: parsed.positionals };
  } catch (error) {
    throw usageErrorOf({ error, flags, command }) ?? error;
  }
}
