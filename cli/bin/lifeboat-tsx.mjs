#!/usr/bin/env -S node --max-old-space-size=384
// The `lifeboat` command from the TypeScript sources, through tsx: for the demo and development
// (`npm run build` compiles the program the package installs; see cli/bin/lifeboat.ts).
import { register } from 'tsx/esm/api';

register();
await import('./lifeboat.ts');
