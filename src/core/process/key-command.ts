import type { Credential, IssuedKey } from '../http/credential.ts';
import { runCommand } from './run-command.ts';
import { childEnv } from '../tunnels/child-env.ts';

/** The key command did not give a key: it failed, timed out, or printed no usable key (which is never shown). */
export class KeyCommandError extends Error {
  override name = 'KeyCommandError';
}

/** How long the command may take: a token refresh over the network, not an interactive login. */
const KEY_COMMAND_TIMEOUT_MS = 60_000;

/**
 * Words of a command line as a POSIX shell would split them, without running one: blanks separate,
 * '…' keeps everything, "…" and a backslash escape the next character. No variables, globs or `~`:
 * what is written is what runs. Throws on an unclosed quote.
 */
export function splitCommandLine(text: string): string[] {
  const words: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
      continue;
    }
    word ??= '';
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new KeyCommandError('unclosed \' in the command');
      word += text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) word += text[i] === '\\' && /["\\$`]/.test(text[i + 1] ?? '') ? text[++i] : text[i];
      if (i >= text.length) throw new KeyCommandError('unclosed " in the command');
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
    } else word += c;
  }
  if (word !== null) words.push(word);
  if (!words.length) throw new KeyCommandError('the command is empty');
  return words;
}

/**
 * A key printed by a command (`--api-key-command`), run without a shell in a scrubbed environment:
 * the first line of its output, trimmed. When a service refuses a key that worked (it expired: a
 * Globus token lives ~48 h), the command is run again once, shared by every request refused at the
 * same time; if that key is refused too, or the command fails, the refusal stands.
 */
export class KeyCommand implements Credential {
  private key: IssuedKey;
  private works = false;
  private rerun: Promise<boolean> | undefined;
  private rerunError: string | null = null;

  private constructor(
    private readonly argv: readonly string[],
    readonly source: string,
    key: string,
  ) {
    this.key = { value: key, issue: 0 };
  }

  /** Runs the command for its first key; throws KeyCommandError when it gives none. */
  static async start(argv: readonly string[], source = '--api-key-command'): Promise<KeyCommand> {
    return new KeyCommand(argv, source, await fetchKey(argv, source));
  }

  current(): IssuedKey {
    return this.key;
  }

  worked(issue: number): void {
    if (issue === this.key.issue) this.works = true;
  }

  refused(issue: number): Promise<boolean> {
    if (issue < this.key.issue) return Promise.resolve(true); // refused with an older key: the fresh one is there
    if (this.rerun) return this.rerun;
    if (!this.works) return Promise.resolve(false); // never worked (or already fetched again): no expiry, a wrong key
    this.works = false;
    this.rerun = fetchKey(this.argv, this.source)
      .then(
        (value) => {
          this.key = { value, issue: this.key.issue + 1 };
          return true;
        },
        (err: unknown) => {
          this.rerunError = (err as Error).message;
          return false;
        },
      )
      .finally(() => (this.rerun = undefined));
    return this.rerun;
  }

  refusal(issue: number): string {
    if (this.rerunError) return `the key of ${this.source} was refused and running it again failed: ${this.rerunError}`;
    return issue > 0 ? `the key of ${this.source} was refused, also when run again` : `the key of ${this.source} was refused`;
  }
}

async function fetchKey(argv: readonly string[], source: string): Promise<string> {
  const result = await runCommand(argv, childEnv(), { timeoutMs: KEY_COMMAND_TIMEOUT_MS });
  if (result.code !== 0) {
    const said = result.stderr.split('\n').map((l) => l.trim()).filter(Boolean).slice(-1)[0]?.slice(0, 200);
    throw new KeyCommandError(`${source} (${argv[0]}) ${result.code === null ? `was killed after ${KEY_COMMAND_TIMEOUT_MS / 1000} s` : `exited ${result.code}`}${said ? `: ${said}` : ''}`);
  }
  const key = result.stdout.split('\n').map((l) => l.trim()).find(Boolean) ?? '';
  // Only visible ASCII may go in a header; what it printed instead is not shown (it may be a key).
  if (!/^[\x21-\x7e]+$/.test(key)) throw new KeyCommandError(`${source} (${argv[0]}) printed no key: its first line of output must be the key alone`);
  return key;
}
