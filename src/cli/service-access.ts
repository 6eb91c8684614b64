import { readFile } from 'node:fs/promises';
import { endpointId, keyRefText, type Endpoint, type PoolOptions } from '../core/index.ts';
import { fixedKey, type Credential } from '../core/http/credential.ts';
import { KeyCommand, KeyCommandError, splitCommandLine } from '../core/process/key-command.ts';
import { secretEnvName } from '../core/process/secret-env.ts';
import { CliError } from './exit.ts';
import { printable } from './format.ts';

/** What a command is told about keys and TLS: the flags (never a key: that stays out of shell history). */
export interface AccessFlags {
  caFile?: string;
  apiKeyCommand?: string;
}

/**
 * Where the command line's endpoints get their keys and what their TLS is verified against. An
 * endpoint's own `key=env:NAME` wins; the others take `--api-key-command`'s key, else `SWARM_API_KEY`,
 * else none. `key=secret:NAME` (VS Code's store) is read from the variable the editor sets for a CLI it
 * starts (secretEnvName). A key missing from the environment, a `key=secret:` no editor handed on, a key command that
 * gives no key and an unreadable `--ca-file` are bad input, before any request. The key command runs
 * once per command (a growing hostfile's new pools share it), again only when a key expires.
 */
export class ServiceAccess {
  private readonly argv: string[] | undefined;
  private command: Promise<KeyCommand> | undefined;
  private ca: Promise<string> | undefined;

  constructor(
    private readonly flags: AccessFlags,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    if (flags.apiKeyCommand !== undefined && env.SWARM_API_KEY) throw new CliError('give one of SWARM_API_KEY and --api-key-command: both would be the key of the endpoints without key= of their own');
    try {
      this.argv = flags.apiKeyCommand === undefined ? undefined : splitCommandLine(flags.apiKeyCommand);
    } catch (err) {
      throw new CliError(`--api-key-command: ${(err as Error).message}`);
    }
  }

  /** The pool options these endpoints need: each one's credential, and the CAs of `--ca-file` when one is https. */
  async poolOptions(endpoints: readonly Endpoint[]): Promise<Partial<PoolOptions>> {
    const credentials = new Map<string, Credential>();
    const shared = await this.sharedKey(endpoints.some((ep) => !ep.key));
    for (const ep of endpoints) {
      const own = ep.key ? this.ownKey(ep) : shared;
      if (own) credentials.set(endpointId(ep), own);
    }
    const tls = this.flags.caFile !== undefined && endpoints.some((ep) => ep.url?.startsWith('https:'));
    return { credentials, ...(tls ? { caCertificates: await (this.ca ??= readCa(this.flags.caFile!)) } : {}) };
  }

  private ownKey(ep: Endpoint): Credential {
    const ref = ep.key!;
    const id = printable(endpointId(ep));
    if (ref.from === 'secret') {
      const handed = this.env[secretEnvName(ref.name)];
      if (!handed) throw new CliError(`${id}: ${keyRefText(ref)} is kept in VS Code's secret storage, which the command line cannot read: give key=env:NAME and set NAME`);
      return fixedKey(handed, keyRefText(ref));
    }
    const value = this.env[ref.name];
    if (!value) throw new CliError(`${id}: ${keyRefText(ref)}: the environment variable ${ref.name} is not set`);
    return fixedKey(value, keyRefText(ref));
  }

  private async sharedKey(needed: boolean): Promise<Credential | undefined> {
    if (!needed) return undefined;
    if (this.env.SWARM_API_KEY) return fixedKey(this.env.SWARM_API_KEY, 'SWARM_API_KEY');
    if (!this.argv) return undefined;
    this.command ??= KeyCommand.start(this.argv).catch((err: unknown) => {
      throw err instanceof KeyCommandError ? new CliError(printable(err.message)) : err;
    });
    return this.command;
  }
}

async function readCa(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new CliError(`--ca-file ${printable(path)}: ${(err as Error).message}`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) throw new CliError(`--ca-file ${printable(path)} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return text;
}
