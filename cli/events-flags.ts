/** The flags of `lifeboat events`. Descriptions only. */
import { DIR, HELP, LOCAL, OUTPUT } from './common-flags.js';
import type { FlagSpec } from './flags.js';

export const eventsFlags = { local: LOCAL, dir: DIR, output: OUTPUT, help: HELP } as const satisfies Record<
  string,
  FlagSpec
>;
