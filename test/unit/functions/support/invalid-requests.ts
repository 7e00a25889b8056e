/**
 * What the property tests of the Validate steps draw: values that break one of Kubernetes' or
 * Velero's rules, each built to be invalid (never filtered through the validator under test),
 * and requests made invalid at one to three field paths of a valid one. Also a store that counts
 * writes, to show that an invalid request writes nothing.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { ObjectStore, PutOptions } from '../../../../shared/ports/object-store.js';

type Json = Record<string, unknown>;

/** A valid DNS-1123 label, short. */
export const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);

const insertAt = ([text, ch, at]: [string, string, number]): string => {
  const i = at % (text.length + 1);
  return `${text.slice(0, i)}${ch}${text.slice(i)}`;
};

/** A character no DNS label holds (a dot included: labels have none). */
const notInLabel = fc.constantFrom(
  'A',
  'Z',
  ' ',
  '_',
  '.',
  '!',
  '/',
  '\\',
  '\u0000',
  'é',
  '\n',
  '@',
  ':',
  '%',
  '~',
);
/** A character no DNS subdomain holds. */
const notInSubdomain = fc.constantFrom(
  'A',
  'Q',
  ' ',
  '_',
  '!',
  '/',
  '\\',
  '\u0000',
  'é',
  '\t',
  '@',
  ':',
  '%',
  '*',
);

const longer = (min: number, max: number) =>
  fc.tuple(fc.integer({ min, max }), fc.constantFrom('a', 'z', '0')).map(([n, ch]) => ch.repeat(n));

export const wrongType = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant([]),
  fc.dictionary(label, fc.string(), { maxKeys: 2 }),
);

export const invalidLabel = fc.oneof(
  fc.tuple(label, notInLabel, fc.nat()).map(insertAt),
  label.map((l) => `-${l}`),
  label.map((l) => `${l}-`),
  longer(64, 300),
  fc.constant(''),
  label.map((l) => `../${l}`),
);

/** Not empty (where the empty string is a default, as for a hook's container). */
export const invalidNonEmptyLabel = invalidLabel.filter((v) => v !== '');

export const invalidSubdomain = fc.oneof(
  fc.tuple(label, notInSubdomain, fc.nat()).map(insertAt),
  fc.tuple(label, label).map(([a, b]) => `${a}..${b}`),
  label.map((l) => `.${l}`),
  longer(254, 600),
  fc.constant(''),
  fc.constant('s'.repeat(1 << 20)),
);

/** Namespace names or globs no namespace can match, or that gobwas/glob does not compile. */
export const invalidNamespacePattern = fc.oneof(
  invalidLabel,
  label.map((l) => `${l}-[`),
  label.map((l) => `${l}-{a`),
  label.map((l) => `${l}-**`),
  label.map((l) => `${l}|*`),
  label.map((l) => `[]${l}`),
  label.map((l) => `${l.toUpperCase()}X*`),
  label.map((l) => `${l}-[A-Z]`),
  longer(254, 400).map((l) => `${l}*`),
);

export const invalidResourcePattern = fc.oneof(
  fc.constant(''),
  label.map((l) => `[${l}`),
  label.map((l) => `${l}{x`),
  fc.tuple(label, label).map(([a, b]) => `${a} ${b}`),
  fc.tuple(label, label).map(([a, b]) => `${a}/${b}`),
  label.map((l) => `${l}\u0000`),
  longer(254, 400),
);

/** Label (and annotation) keys Kubernetes refuses. */
export const invalidLabelKey = fc.oneof(
  fc.constant(''),
  fc.tuple(label, label).map(([a, b]) => `${a} ${b}`),
  fc.tuple(label, label, label).map(([a, b, c]) => `${a}/${b}/${c}`),
  label.map((l) => `/${l}`),
  label.map((l) => `${l}/`),
  longer(64, 400),
  label.map((l) => `Upper_Prefix/${l}`),
  label.map((l) => `-${l}`),
);

export const invalidLabelValue = fc.oneof(
  label.map((l) => `${l} x`),
  longer(64, 120),
  label.map((l) => `-${l}`),
  label.map((l) => `${l}/x`),
  label.map((l) => `${l}\u0000`),
);

/** Not Go durations: no unit, unknown units, junk, or past int64 nanoseconds. */
export const invalidDuration = fc.oneof(
  fc.constantFrom('forever', '1d', '10', 'h', '5m trailing', '1.5.5s', '-', '.s', '1hh', '1 h', ''),
  fc.bigInt({ min: 2_562_048n, max: 10n ** 30n }).map((n) => `${n}h`),
  fc.bigInt({ min: 9_223_372_037n, max: 10n ** 30n }).map((n) => `${n}s`),
  fc.string({ maxLength: 12 }).map((s) => `${s}!`),
);

/** Not a timeout: not a duration, or a negative one. */
export const invalidTimeout = fc.oneof(
  invalidDuration,
  fc.integer({ min: 1, max: 1_000_000 }).map((n) => `-${n}s`),
  fc.integer({ min: 1, max: 1000 }).map((n) => `-${n}h30m`),
);

/** A record whose only key is one Kubernetes refuses. */
export const badKeyRecord = invalidLabelKey.map((key) => ({ [key]: 'x' }));

/** One way to break a request: the field path its problem must be reported at, and how. */
export interface Mutation {
  readonly path: string;
  readonly value: fc.Arbitrary<unknown>;
  readonly apply: (request: Json, value: unknown) => void;
}

/** Sets the value at a path of keys (and array indexes) inside a request. */
export function setAt(keys: readonly (string | number)[]): Mutation['apply'] {
  return (request, value) => {
    let node: Json = request;
    for (const key of keys.slice(0, -1)) node = node[key as string] as Json;
    node[keys.at(-1) as string] = value;
  };
}

/** A mutation that sets one field: `path` is how problems name it, `keys` where it lives. */
export const field = (path: string, keys: readonly (string | number)[], value: fc.Arbitrary<unknown>) => ({
  path,
  value,
  apply: setAt(keys),
});

/** A mutation that adds a key Kubernetes refuses to the record at `keys` (its other keys kept). */
export const badKeyIn = (path: string, keys: readonly (string | number)[]): Mutation => ({
  path,
  value: invalidLabelKey,
  apply: (request, key) => setAt([...keys, String(key)])(request, 'x'),
});

/** A valid request broken at one to three of the mutations' paths (each path at most once). */
export function brokenRequests(
  base: () => Json,
  mutations: readonly Mutation[],
): fc.Arbitrary<{ request: Json; paths: string[] }> {
  return fc.shuffledSubarray([...mutations], { minLength: 1, maxLength: 3 }).chain((chosen) =>
    fc.tuple(...chosen.map((m) => m.value)).map((values) => {
      const request = base();
      for (const [i, m] of chosen.entries()) m.apply(request, values[i]);
      return { request, paths: chosen.map((m) => m.path) };
    }),
  );
}

/** An in-memory store behind the ObjectStore port that counts every write. */
export class CountingStore implements ObjectStore {
  readonly location = 'memory://';
  writes = 0;
  private readonly objects = new Map<string, Uint8Array>();

  async put(key: string, body: Uint8Array | string, _options?: PutOptions): Promise<void> {
    this.writes++;
    this.objects.set(key, typeof body === 'string' ? Buffer.from(body) : body);
  }
  async putStream(key: string, body: AsyncIterable<Uint8Array>): Promise<void> {
    this.writes++;
    const chunks: Uint8Array[] = [];
    for await (const chunk of body) chunks.push(chunk);
    this.objects.set(key, Buffer.concat(chunks));
  }
  async get(key: string): Promise<Uint8Array | undefined> {
    return this.objects.get(key);
  }
  async getStream(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const body = this.objects.get(key);
    return body
      ? (async function* () {
          yield body;
        })()
      : undefined;
  }
  async exists(key: string): Promise<boolean> {
    return this.objects.has(key);
  }
  async list(prefix: string): Promise<string[]> {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
  async delete(key: string): Promise<void> {
    this.writes++;
    this.objects.delete(key);
  }
}

/** How many invalid requests each property draws. */
export const RUNS = 1000;

/** A Validate step's answer: valid, or the problems it found by field path. */
type Outcome = { valid: true } | { valid: false; problems: readonly { path: string }[] };

/**
 * Draws RUNS requests broken at one to three of the mutations' paths and checks that the step
 * refuses each, naming every broken path (never the request as a whole), with nothing written.
 */
export async function checkRefusals(options: {
  name: string;
  base: () => Json;
  mutations: readonly Mutation[];
  acceptsBase: (request: Json) => boolean;
  validate: (request: Json, store: CountingStore) => Promise<Outcome>;
}): Promise<void> {
  expect(options.acceptsBase(options.base())).toBe(true);
  let drawn = 0;
  await fc.assert(
    fc.asyncProperty(brokenRequests(options.base, options.mutations), async ({ request, paths }) => {
      drawn++;
      const store = new CountingStore();
      const outcome = await options.validate(request, store);
      expect(outcome.valid).toBe(false);
      if (outcome.valid) return;
      const reported = outcome.problems.map((p) => p.path);
      for (const path of paths)
        expect(
          reported.some((r) => r.startsWith(path)),
          `${path} in ${reported}`,
        ).toBe(true);
      expect(reported.every((r) => r !== '' && r !== '(request)')).toBe(true);
      expect(store.writes).toBe(0);
    }),
    { numRuns: RUNS },
  );
  console.info(`${options.name}: drew ${drawn} invalid requests, each FailedValidation with its field paths`);
  expect(drawn).toBeGreaterThanOrEqual(RUNS);
}
