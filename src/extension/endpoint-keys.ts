import { endpointId, keyRefText, type Endpoint } from '../core/endpoints/endpoint.ts';
import { fixedKey, type Credential } from '../core/http/credential.ts';
import type { ApiKeyStore } from './secrets.ts';

/** What each endpoint of a swarm sends, and the key references nothing answers (for one warning). */
export interface EndpointKeys {
  credentials: Map<string, Credential>;
  missing: string[];
}

/** Where `Swarm: Set API Key` keeps the key of lines without `key=`. */
const DEFAULT_SOURCE = '"Swarm: Set API Key"';

/**
 * The key each endpoint sends: its line's `key=secret:NAME` (this window's secret storage) or
 * `key=env:NAME` (the extension host's environment), else the default key of Swarm: Set API Key.
 */
export async function endpointKeys(endpoints: readonly Endpoint[], store: ApiKeyStore): Promise<EndpointKeys> {
  const credentials = new Map<string, Credential>();
  const missing = new Set<string>();
  const fallback = await store.get();
  for (const ep of endpoints) {
    const ref = ep.key;
    const value = !ref ? fallback : ref.from === 'secret' ? await store.get(ref.name) : process.env[ref.name];
    if (value) credentials.set(endpointId(ep), fixedKey(value, ref ? keyRefText(ref) : DEFAULT_SOURCE));
    else if (ref) missing.add(keyRefText(ref));
  }
  return { credentials, missing: [...missing] };
}

/** The secret names a swarm's hostfile refers to (`key=secret:NAME`), for Set API Key to offer. */
export function secretNames(endpoints: readonly Endpoint[]): string[] {
  return [...new Set(endpoints.flatMap((ep) => (ep.key?.from === 'secret' ? [ep.key.name] : [])))];
}

/** Whether two sets of credentials send the same keys from the same sources (a store event that changed nothing of ours). */
export async function sameKeys(a: ReadonlyMap<string, Credential> | undefined, b: ReadonlyMap<string, Credential> | undefined): Promise<boolean> {
  if ((a?.size ?? 0) !== (b?.size ?? 0)) return false;
  for (const [id, x] of a ?? []) {
    const y = b!.get(id);
    if (!y || y.source !== x.source || (await x.current()).value !== (await y.current()).value) return false;
  }
  return true;
}
