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

/** Thrown when a hostfile has errors; the message lists every one of them, one per line. */
export class HostfileError extends Error {
  override readonly name = 'HostfileError';

  constructor(readonly issues: HostfileIssue[]) {
    super(issues.map(formatIssue).join('\n'));
  }
}
