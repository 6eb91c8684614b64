/** One problem found in a hostfile. `line` is 1-based; 0 means the whole file (only "no endpoints"). */
export interface HostfileIssue {
  readonly file: string;
  readonly line: number;
  readonly message: string;
  /** `FILE:LINE: message`, or `FILE: message` for a whole-file issue. */
  toString(): string;
}

export function formatIssue(issue: Pick<HostfileIssue, 'file' | 'line' | 'message'>): string {
  return issue.line > 0
    ? `${issue.file}:${issue.line}: ${issue.message}`
    : `${issue.file}: ${issue.message}`;
}

// A class keeps toString on the prototype, so issues stay plain data when compared or serialised.
class Issue implements HostfileIssue {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly message: string,
  ) {}

  toString(): string {
    return formatIssue(this);
  }
}

export function makeIssue(file: string, line: number, message: string): HostfileIssue {
  return new Issue(file, line, message);
}

/** How many problems a message lists before "… and N more": a junk file must not flood the terminal. */
export const LISTED_ERRORS = 20;

/** The first `max` items, one a line, then one `… and N more`. */
export function cappedList<T>(items: readonly T[], show: (item: T) => string = String, max = LISTED_ERRORS): string {
  const lines = items.slice(0, max).map(show);
  if (items.length > max) lines.push(`… and ${(items.length - max).toLocaleString('en-US')} more`);
  return lines.join('\n');
}

/** Thrown when a hostfile has errors; `issues` holds every one, the message the first 20 of them. */
export class HostfileError extends Error {
  override readonly name = 'HostfileError';

  constructor(readonly issues: HostfileIssue[]) {
    super(cappedList(issues, formatIssue));
  }
}
