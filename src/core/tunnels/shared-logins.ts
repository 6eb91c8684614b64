import type { SshLogin } from './tunnel.ts';

/**
 * The SSH logins of one process (a VS Code window), one per destination: whoever needs the login
 * node next (Launch after Connect, Connect after Launch, a re-attached job) rides the login already
 * made, so a one-time password is typed once. Each user gets a handle of its own and closes it;
 * the master ends when the last handle is closed, and the next user logs in afresh.
 */
export class SharedLogins {
  private readonly logins = new Map<string, Promise<SshLogin>>();

  /** A handle on the login for `key` (SshLogin.key), made by `create` when there is none going. */
  async acquire(key: string, create: () => Promise<SshLogin>): Promise<SshLogin> {
    const going = this.logins.get(key);
    if (going) {
      // A login still under way is waited for, not doubled; one that failed or ended is made again.
      const shared = (await going.catch(() => undefined))?.share();
      if (shared) return shared;
      if (this.logins.get(key) !== going) return this.acquire(key, create); // someone else made it meanwhile
    }
    const made = create();
    this.logins.set(key, made);
    made.catch(() => this.logins.get(key) === made && this.logins.delete(key));
    return made;
  }
}
