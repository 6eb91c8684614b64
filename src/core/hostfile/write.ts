import { keyRefText, type Endpoint } from '../endpoints/endpoint.ts';
import { HostfileError, makeIssue, type HostfileIssue } from './issue.ts';
import { checkBaseUrl, checkHost, checkKeyRef, checkPort, checkTag, keyLikeTag } from './validate.ts';

/**
 * Canonical hostfile text, as Aurora-Swarm's writer produces it: `host<TAB>port<TAB>k=v...`
 * with tags sorted by key, one line per endpoint; a service's line starts with its base URL, and an
 * endpoint's `key=` reference (never a key) comes last. IPv6 hosts stay bare: the port always has
 * its own column, so no brackets are needed. Throws HostfileError (file "<writeHostfile>",
 * line = output line) for an endpoint that would not read back as itself.
 */
export function writeHostfile(endpoints: readonly Endpoint[]): string {
  const issues: HostfileIssue[] = [];
  const lines = endpoints.map((ep, i) => {
    const problems: Array<string | undefined> = [];
    if (ep.url) {
      const url = checkBaseUrl(ep.url);
      problems.push('error' in url ? url.error : undefined);
    } else {
      const port = checkPort(String(ep.port));
      problems.push(checkHost(ep.host), 'error' in port ? port.error : undefined);
    }
    const tags = Object.entries(ep.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [key, value] of tags) problems.push(checkTag(key, value) ?? keyLikeTag(key) ?? (key === 'key' ? 'a tag named "key" would read back as a key reference' : undefined));
    if (ep.key) {
      const ref = checkKeyRef(`${ep.key.from}:${ep.key.name}`);
      problems.push('error' in ref ? ref.error : undefined);
    }
    for (const message of problems) if (message) issues.push(makeIssue('<writeHostfile>', i + 1, message));
    const address = ep.url ? [ep.url] : [ep.host, String(ep.port)];
    return [...address, ...tags.map(([key, value]) => `${key}=${value}`), ...(ep.key ? [keyRefText(ep.key)] : [])].join('\t');
  });
  if (issues.length > 0) throw new HostfileError(issues);
  return lines.map((line) => `${line}\n`).join('');
}
