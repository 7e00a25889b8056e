/**
 * Where `lifeboat --local` finds what it starts beside itself: the state machine definitions,
 * the ItemBlock worker thread, and the entries of the data mover's and hook runner's child
 * processes. Two layouts: the sources, run through tsx or vitest (this module's own file then
 * ends in `.ts`), and the compiled package cli/build.ts writes (every module in one folder,
 * `lib/`, the definitions beside it in `statemachines/`). Never reads or starts anything.
 */
import { fileURLToPath } from 'node:url';

/** The compiled package's separately started programs: their module names and sources. */
export const COMPILED_PROGRAMS = {
  'item-block-thread': 'cli/local/item-block-thread.ts',
  'data-mover': 'functions/data-mover/main.ts',
  'hook-runner': 'functions/hook-runner/main.ts',
} as const;

export interface RuntimeFiles {
  /** Whether these are the compiled package's files, which need no TypeScript loader. */
  readonly compiled: boolean;
  /** Where child processes start: the repository, or the installed package. */
  readonly root: string;
  readonly statemachine: (workflow: 'backup' | 'restore' | 'delete' | 'drill') => string;
  /** The ItemBlock worker thread: its source (bundled on first use) or its compiled module. */
  readonly itemBlockThread: string;
  readonly dataMover: string;
  readonly hookRunner: string;
  /** Node's arguments before a child process's entry: tsx's loader for sources, none compiled. */
  readonly childExecArgv: readonly string[];
}

const at = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));

export const runtimeFiles: RuntimeFiles = import.meta.url.endsWith('.ts')
  ? {
      compiled: false,
      root: at('../../'),
      statemachine: (workflow) => at(`../../statemachines/${workflow}.asl.json`),
      itemBlockThread: at(`../../${COMPILED_PROGRAMS['item-block-thread']}`),
      dataMover: at(`../../${COMPILED_PROGRAMS['data-mover']}`),
      hookRunner: at(`../../${COMPILED_PROGRAMS['hook-runner']}`),
      childExecArgv: ['--import', 'tsx'],
    }
  : {
      compiled: true,
      root: at('../'),
      statemachine: (workflow) => at(`../statemachines/${workflow}.asl.json`),
      itemBlockThread: at('./item-block-thread.mjs'),
      dataMover: at('./data-mover.mjs'),
      hookRunner: at('./hook-runner.mjs'),
      childExecArgv: [],
    };
