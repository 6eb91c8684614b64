import { writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * An ssh config for the CLI that rides the window's master (its control socket) and otherwise reads
 * the user's own config: the first value ssh finds wins, so ours come first.
 */
export async function rideConfig(folder: string, socket: string | undefined, userConfig: string): Promise<string> {
  const path = join(folder, 'ride-login.ssh_config');
  const own = userConfig || join(homedir(), '.ssh', 'config');
  await writeFile(path, `${socket ? `Host *\n  ControlPath ${socket}\n  ControlMaster auto\n` : ''}Include ${own}\n`, { mode: 0o600 });
  return path;
}
