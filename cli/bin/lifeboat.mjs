#!/usr/bin/env -S node --max-old-space-size=384
// The `lifeboat` command: runs the TypeScript sources through tsx. Its heap is capped at 384 MiB
// (the main thread stays within 512 MiB, as a Lambda of that size would): a backup's live data is
// bounded; without a cap V8 lets garbage pile up to the machine's memory before collecting. A local
// backup's worker threads (cli/local/item-block-threads.ts) have the same cap each; they hold one
// message's work at a time (tens of MiB; measured: the process peaks ~50 MiB higher per thread).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../main.ts');
process.exitCode = await main(process.argv.slice(2));
