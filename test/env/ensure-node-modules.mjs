// Installs the npm packages when they are missing or older than the lock file, so that
// `npm test` and `npm run demo` work on a fresh clone. Plain JavaScript: it runs before any
// dependency exists.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';

const marker = 'node_modules/.package-lock.json';
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs;
if (stale) {
  console.error('[setup] installing npm packages…');
  const result = spawnSync('npm', ['install', '--no-audit', '--no-fund'], { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
