#!/usr/bin/env -S node --max-old-space-size=384
/**
 * The `lifeboat` program, compiled by cli/build.ts into the package's `lib/lifeboat.mjs` (the
 * `bin` it installs). Its heap is capped at 384 MiB (the main thread stays within 512 MiB, as a
 * Lambda of that size would): a backup's live data is bounded; without a cap V8 lets garbage
 * pile up to the machine's memory before collecting. A local backup's worker threads
 * (cli/local/item-block-threads.ts) have the same cap each; they hold one message's work at a
 * time (tens of MiB; measured: the process peaks ~50 MiB higher per thread).
 */
import { main } from '../main.js';

// The AWS SDK warns on every run that its releases of 2027 will need Node 22: true of Lambda's
// runtime, not news to someone running a command. Child processes and threads inherit this.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.exitCode = await main(process.argv.slice(2));
