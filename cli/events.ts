/**
 * `lifeboat events --local`: the events the local runs published (a backup, restore,
 * deletion or DR drill's end, as a deployment publishes them to EventBridge), oldest first, as a table or as
 * the JSON or YAML of each event. A deployment's events are on EventBridge, for rules to route.
 */
import { LocalEventFile } from '../shared/adapters/local-event-file.js';
import type { eventsFlags } from './events-flags.js';
import { UsageError } from './flags.js';
import { outputForm, printDocument } from './output.js';
import { table } from './render/table.js';
import { directoryOf, localStore } from './store.js';
import type { VerbCall } from './verb-call.js';

export async function showEvents({ values, io }: VerbCall<typeof eventsFlags>): Promise<number> {
  const form = outputForm(values.output);
  if (!values.local)
    throw new UsageError(
      "a deployment's events go to EventBridge (source lifeboat): route them with a rule; add --local to show a directory's",
    );
  const store = await localStore(values, { mustExist: true });
  const events = await new LocalEventFile(directoryOf(store)).read();
  if (form !== 'text') {
    await printDocument({ io, form, document: events });
    return 0;
  }
  const rows = [
    ['TIME', 'EVENT', 'NAME', 'CLUSTER'],
    ...events.map((e) => [
      e.time,
      e['detail-type'],
      String(
        e.detail.drill ?? (e.detail.backup && !e.detail.restore ? e.detail.backup : (e.detail.restore ?? '')),
      ),
      String(e.detail.cluster ?? ''),
    ]),
  ];
  io.out.write(`${table(rows)}\n`);
  return 0;
}
