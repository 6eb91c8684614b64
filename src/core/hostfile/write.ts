import type { Endpoint } from '../endpoint.ts';
import { HostfileError, makeIssue, type HostfileIssue } from './issue.ts';
import { checkHost, checkPort, checkTag } from './validate.ts';

/**
 * Canonical hostfile text, as Aurora-Swarm's writer produces it: `host<TAB>port<TAB>k=v...`
 * with tags sorted by key, one line per endpoint. IPv6 hosts stay bare: the port always has
 * its own column, so no brackets are needed. Throws HostfileError (file "<writeHostfile>",
 * line = output line) for an endpoint that would not read back as itself.
 */
export function writeHostfile(endpoints: readonly Endpoint[]): string {
  const issues: HostfileIssue[] = [];
  const lines = endpoints.map((ep, i) => {
    const port = checkPort(String(ep.port));
    const problems = [checkHost(ep.host), 'error' in port ? port.error : undefined];
    const tags = Object.entries(ep.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [key, value] of tags) problems.push(checkTag(key, value));
    for (const message of problems) if (message) issues.push(makeIssue('<writeHostfile>', i + 1, message));
    return [ep.host, String(ep.port), ...tags.map(([key, value]) => `${key}=${value}`)].join('\t');
  });
  if (issues.length > 0) throw new HostfileError(issues);
  return lines.map((line) => `${line}\n`).join('');
}
