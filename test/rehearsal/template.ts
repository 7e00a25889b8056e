/**
 * The synthesized template as data: its resources by type, and CloudFormation's intrinsic
 * functions resolved against the physical ids the rehearsal gave each resource (Ref, Fn::GetAtt,
 * Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::GetAZs and the pseudo parameters). An intrinsic or
 * attribute it does not know fails loudly: the rehearsal never guesses a value.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, Json>;
  readonly DependsOn?: string | string[];
}

export interface Template {
  readonly Resources: Record<string, Resource>;
}

export interface AssetManifest {
  readonly files: Record<string, { displayName?: string; source: { path: string; packaging?: string } }>;
  readonly dockerImages?: Record<
    string,
    {
      displayName?: string;
      source: { directory: string; dockerBuildArgs?: Record<string, string>; dockerFile?: string };
    }
  >;
}

export interface CloudAssembly {
  readonly dir: string;
  readonly stackName: string;
  readonly template: Template;
  readonly assets: AssetManifest;
}

export async function loadAssembly(dir: string, stackName = 'Lifeboat'): Promise<CloudAssembly> {
  const template = JSON.parse(await readFile(join(dir, `${stackName}.template.json`), 'utf8')) as Template;
  const assets = JSON.parse(await readFile(join(dir, `${stackName}.assets.json`), 'utf8')) as AssetManifest;
  return { dir, stackName, template, assets };
}

/** The logical ids and resources of one type, in template order. */
export function resourcesOf(template: Template, type: string): [string, Resource][] {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

/** What a deployed resource is known by: its Ref value and its attributes. */
export interface Physical {
  readonly ref: string;
  readonly attributes: Readonly<Record<string, string>>;
}

export interface Resolver {
  readonly account: string;
  readonly region: string;
  readonly stackName: string;
  readonly physical: ReadonlyMap<string, Physical>;
}

const isObject = (v: Json): v is { [key: string]: Json } =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function pseudo(resolver: Resolver, name: string): string | undefined {
  const values: Record<string, string> = {
    'AWS::AccountId': resolver.account,
    'AWS::Region': resolver.region,
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
    'AWS::StackName': resolver.stackName,
    'AWS::StackId': `arn:aws:cloudformation:${resolver.region}:${resolver.account}:stack/${resolver.stackName}/rehearsal`,
    'AWS::NoValue': '',
  };
  return values[name];
}

function ref(resolver: Resolver, name: string): string {
  const value = pseudo(resolver, name) ?? resolver.physical.get(name)?.ref;
  if (value === undefined) throw new Error(`rehearsal: Ref to ${name}, which has no physical id`);
  return value;
}

function getAtt(resolver: Resolver, target: Json): string {
  const [id, attribute] = Array.isArray(target) ? target : String(target).split('.');
  const value = resolver.physical.get(String(id))?.attributes[String(attribute)];
  if (value === undefined)
    throw new Error(`rehearsal: Fn::GetAtt ${String(id)}.${String(attribute)} is unknown`);
  return value;
}

function sub(resolver: Resolver, args: Json): string {
  const [text, vars] = Array.isArray(args) ? [String(args[0]), args[1]] : [String(args), {}];
  const values = isObject(vars ?? null) ? (vars as Record<string, Json>) : {};
  return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
    if (name in values) return String(resolve(resolver, values[name] ?? ''));
    if (name.includes('.')) return getAtt(resolver, name);
    return ref(resolver, name);
  });
}

/** The value of `value` once deployed: every intrinsic function replaced. */
export function resolve(resolver: Resolver, value: Json): Json {
  if (Array.isArray(value)) return value.map((v) => resolve(resolver, v));
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  const [key] = keys;
  if (keys.length === 1 && key !== undefined && (key === 'Ref' || key.startsWith('Fn::'))) {
    const args = value[key] as Json;
    switch (key) {
      case 'Ref':
        return ref(resolver, String(args));
      case 'Fn::GetAtt':
        return getAtt(resolver, args);
      case 'Fn::Join': {
        const [separator, parts] = args as [string, Json[]];
        return (resolve(resolver, parts) as Json[]).map(String).join(separator);
      }
      case 'Fn::Sub':
        return sub(resolver, args);
      case 'Fn::Select': {
        const [index, list] = args as [Json, Json];
        return (resolve(resolver, list) as Json[])[Number(resolve(resolver, index))] ?? null;
      }
      case 'Fn::Split': {
        const [separator, text] = args as [string, Json];
        return String(resolve(resolver, text)).split(separator);
      }
      case 'Fn::GetAZs':
        return [`${resolver.region}a`, `${resolver.region}b`, `${resolver.region}c`];
      default:
        throw new Error(`rehearsal: the intrinsic ${key} is not supported`);
    }
  }
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(resolver, v)]));
}

/** `resolve` for a value that must come out a string. */
export function resolveString(resolver: Resolver, value: Json | undefined): string {
  const resolved = resolve(resolver, value ?? null);
  if (typeof resolved !== 'string')
    throw new Error(`rehearsal: expected a string, got ${JSON.stringify(resolved)}`);
  return resolved;
}
