import { dirname } from 'node:path/posix';
import type { SshMaster } from '../tunnels/master.ts';
import type { JobHost } from './host.ts';

/**
 * The login node, through the SSH master already logged in: every command rides it, so launching,
 * polling and cancelling never ask for a second one-time password.
 */
export function sshHost(master: SshMaster): JobHost {
  // ssh hands the remote login shell one string: each word goes in single quotes so none of it is interpreted.
  const run: JobHost['run'] = (argv, options = {}) => master.run(argv.map(quote), options);
  let home: string | undefined;
  return {
    label: master.label,
    run,
    readText: async (path) => {
      const r = await run(['cat', '--', path]);
      if (r.code === 0) return r.stdout;
      if (/No such file/i.test(r.stderr)) return undefined;
      throw new Error(`cannot read ${path} on ${master.label}: ${r.stderr.trim() || `exit ${r.code}`}`);
    },
    writeText: async (path, text) => {
      const made = await run(['mkdir', '-p', '--', dirname(path)]);
      // tee copies its input into the file; what it echoes back is dropped.
      const written = made.code === 0 ? await run(['tee', '--', path], { input: text }) : made;
      if (written.code !== 0) throw new Error(`cannot write ${path} on ${master.label}: ${written.stderr.trim() || `exit ${written.code}`}`);
    },
    home: async () => {
      if (home === undefined) {
        const r = await run(['pwd']);
        if (r.code !== 0) throw new Error(`cannot find the home folder on ${master.label}: ${r.stderr.trim() || `exit ${r.code}`}`);
        home = r.stdout.trim();
      }
      return home;
    },
  };
}

/** A POSIX shell word that means exactly `word`. */
export function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
