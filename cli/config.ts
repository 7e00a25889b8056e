/**
 * The `lifeboat` command's own settings, as `velero client config` keeps Velero's: a JSON file
 * ($LIFEBOAT_CONFIG, else ~/.config/lifeboat/config.json) with the endpoint of a deployment's API,
 * and where the local server's token is ($LIFEBOAT_TOKEN_FILE, else ~/.config/lifeboat/server-token).
 * Reads and writes only these files; loads nothing heavy.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from './flags.js';

export interface ClientConfig {
  /** The API's base URL: API Gateway's stage URL, or the local server's. */
  readonly endpoint?: string;
}

const configDir = (): string => join(homedir(), '.config', 'lifeboat');

export function configFile(): string {
  return resolve(process.env.LIFEBOAT_CONFIG || join(configDir(), 'config.json'));
}

export function tokenFile(flag?: string): string {
  return resolve(flag || process.env.LIFEBOAT_TOKEN_FILE || join(configDir(), 'server-token'));
}

export async function readConfig(): Promise<ClientConfig> {
  const file = configFile();
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw new UsageError(`the config file ${file}: ${error.code ?? error.message}`);
  });
  if (text === undefined) return {};
  try {
    const parsed = JSON.parse(text) as { endpoint?: unknown };
    return typeof parsed.endpoint === 'string' ? { endpoint: parsed.endpoint } : {};
  } catch {
    throw new UsageError(
      `the config file ${file} is not JSON: fix it, or set it again with lifeboat config set endpoint URL`,
    );
  }
}

export async function writeConfig(config: ClientConfig): Promise<string> {
  const file = configFile();
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  return file;
}

/** An endpoint as given: an http(s) URL, without a trailing slash; anything else a usage error. */
export function checkedEndpoint(text: string, from: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(
      `${from}: "${text}" is not a URL (e.g. https://abc123.execute-api.eu-west-1.amazonaws.com/v1)`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`${from}: "${text}" must be an http(s) URL`);
  return text.replace(/\/+$/, '');
}
