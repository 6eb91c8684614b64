/**
 * The environment variable through which the editor hands the key of `key=secret:NAME` (kept in VS
 * Code's secret storage, which the command line cannot read) to a CLI process it starts: a detached
 * run, a resume. Only ever in that child's environment, never an argument, a setting or a file.
 * Letters and digits stay; every other character becomes `_` and its hex code, so two names never
 * share a variable.
 */
export function secretEnvName(name: string): string {
  return `SWARM_SECRET_${name.replace(/[^A-Za-z0-9]/g, (c) => `_${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`)}`;
}
