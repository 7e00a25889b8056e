#!/usr/bin/env node
// The `lifeboat` command: runs the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../main.ts');
process.exitCode = await main(process.argv.slice(2));
