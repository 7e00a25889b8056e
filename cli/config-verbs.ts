/**
 * `lifeboat config set endpoint URL` and `lifeboat config get`: the endpoint the command talks to
 * without --local, kept in its config file (config.ts), as `velero client config set` keeps
 * Velero's. Checks the URL before writing it.
 */
import { checkedEndpoint, configFile, readConfig, tokenFile, writeConfig } from './config.js';
import type { configGetFlags, configSetFlags } from './config-flags.js';
import { outputForm, printDocument } from './output.js';
import type { VerbCall } from './verb-call.js';

export async function setEndpoint({ name = '', io }: VerbCall<typeof configSetFlags>): Promise<number> {
  const endpoint = checkedEndpoint(name, 'lifeboat config set endpoint');
  const file = await writeConfig({ ...(await readConfig()), endpoint });
  io.out.write(`endpoint set to ${endpoint} (in ${file})\n`);
  return 0;
}

export async function getConfig({ values, io }: VerbCall<typeof configGetFlags>): Promise<number> {
  const form = outputForm(values.output);
  const config = await readConfig();
  const document = {
    file: configFile(),
    endpoint: process.env.LIFEBOAT_ENDPOINT || config.endpoint || null,
    ...(process.env.LIFEBOAT_ENDPOINT ? { endpointFrom: '$LIFEBOAT_ENDPOINT' } : {}),
    tokenFile: tokenFile(),
  };
  if (form !== 'text') await printDocument({ io, form, document });
  else
    io.out.write(
      `endpoint: ${document.endpoint ?? '<none>'}${document.endpointFrom ? ` (from ${document.endpointFrom})` : ''}\nconfig file: ${document.file}\nlocal server token file: ${document.tokenFile}\n`,
    );
  return 0;
}
