/**
 * vLLM removed the `guided_*` request fields in 0.12 (#29326, deprecated since 0.10.2): a newer
 * server takes them without error and ignores them, so a run asking for JSON gets free text.
 */
const REMOVED_IN = [0, 12];

/** The `guided_*` fields among a run's extra request fields. */
export function guidedFields(extra: Record<string, unknown> | undefined): string[] {
  return Object.keys(extra ?? {}).filter((k) => k.startsWith('guided_'));
}

/** One warning line when any endpoint's `/version` is 0.12 or later; null when none is (or none says). */
export function guidedWarning(fields: readonly string[], versions: ReadonlyArray<{ id: string; version: string | null }>): string | null {
  const ignoring = versions.filter((v) => v.version !== null && atLeast(v.version, REMOVED_IN));
  if (!fields.length || !ignoring.length) return null;
  const where = ignoring.map((v) => `${v.id} (${v.version})`).join(', ');
  return `${fields.join(', ')} ${fields.length === 1 ? 'is' : 'are'} silently ignored by vLLM 0.12 and later (${where}): use structured_outputs, e.g. --param 'structured_outputs={"json": …}'`;
}

function atLeast(version: string, min: readonly number[]): boolean {
  const parts = /^(\d+)\.(\d+)/.exec(version);
  if (!parts) return false;
  const [major, minor] = [Number(parts[1]), Number(parts[2])];
  return major !== min[0] ? major > min[0]! : minor >= min[1]!;
}
