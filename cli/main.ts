/**
 * The `lifeboat` command line: thin. It finds the verb in the table (verbs.ts), parses its flags,
 * loads the verb's module and runs it. Problems are printed as one or two lines naming what to
 * fix, never as stack traces; the exit status says what happened: 0 done, 1 the operation failed
 * (or ended PartiallyFailed, or found nothing by that name), 2 the command line is wrong.
 */
import { KubeconfigProblem } from '../shared/adapters/errors.js';
import { parseFlags, UsageError } from './flags.js';
import { overview, verbUsage } from './usage.js';
import { type Io, NOUNS, VERBS, verbOf } from './verbs.js';

export { UsageError };

const HELP_WORDS = ['help', '--help', '-h'];

/** The command line as far as the words before `--` go: whether it asks for help. */
const asksHelp = (args: readonly string[]): boolean => {
  const end = args.indexOf('--');
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === '--help' || a === '-h');
};

async function dispatch(argv: readonly string[], io: Io): Promise<number> {
  const [first] = argv;
  if (first === undefined || HELP_WORDS.includes(first)) {
    io.out.write(overview());
    return 0;
  }
  if (first === '__complete') return (await import('./completion.js')).complete(argv.slice(1), io);
  const found = verbOf(argv);
  if (!found) return unknownCommand(argv, io);
  const { verb, args } = found;
  const command = verb.words.join(' ');
  if (asksHelp(args)) {
    io.out.write(verbUsage(verb));
    return 0;
  }
  const { values, operands } = parseFlags({ command, flags: verb.flags, args });
  const [name, extra] = operands;
  if (extra !== undefined)
    throw new UsageError(
      `lifeboat ${command}: unexpected argument "${extra}" (takes ${verb.operand ? `one ${verb.operand.name}` : 'no operand'})`,
    );
  if (verb.operand?.required && name === undefined)
    throw new UsageError(`lifeboat ${command} needs ${verb.operand.name}; see lifeboat ${command} --help`);
  return verb.run({ name, values, io });
}

/** A noun alone lists its verbs; anything else is a usage error naming the word. */
function unknownCommand(argv: readonly string[], io: Io): number {
  const [noun, word] = argv;
  if (noun !== undefined && NOUNS.includes(noun)) {
    const verbs = VERBS.filter((v) => v.words[0] === noun).map((v) => v.words[1]);
    if (word === undefined || HELP_WORDS.includes(word)) {
      (word === undefined ? io.err : io.out).write(overview(noun));
      return word === undefined ? 2 : 0;
    }
    throw new UsageError(`lifeboat ${noun}: unknown command "${word}" (one of: ${verbs.join(', ')})`);
  }
  throw new UsageError(`unknown command "${noun}" (one of: ${NOUNS.join(', ')}); see lifeboat --help`);
}

/** The exit status of a failure, and its message on stderr: one line, no stack. */
function reported(error: unknown, io: Io): number {
  const usage = error instanceof UsageError || error instanceof KubeconfigProblem;
  const message = error instanceof Error ? error.message : String(error);
  const unexpected = error instanceof Error && !usage && error.name !== 'Error' && !('retryable' in error);
  io.err.write(`lifeboat: ${unexpected ? `${error.name}: ` : ''}${message}\n`);
  if (process.env.LIFEBOAT_DEBUG && error instanceof Error && error.stack) io.err.write(`${error.stack}\n`);
  return usage ? 2 : 1;
}

export async function main(
  argv: readonly string[],
  io: Io = { out: process.stdout, err: process.stderr },
): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    return reported(error, io);
  }
}
