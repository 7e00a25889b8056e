/** The flags of `lifeboat config set endpoint|get`. Descriptions only. */
import { HELP, OUTPUT } from './common-flags.js';
import type { FlagSpec } from './flags.js';

export const configSetFlags = { help: HELP } as const satisfies Record<string, FlagSpec>;

export const configGetFlags = { output: OUTPUT, help: HELP } as const satisfies Record<string, FlagSpec>;
