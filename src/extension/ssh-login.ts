import * as vscode from 'vscode';
import { SshLogin, type LoginCommand, type TunnelOptions } from '../core/index.ts';
import type { Services } from './services.ts';

/**
 * A handle on this window's one login to `options.via`: the one already made (by Connect, Launch or
 * a re-attached job) when there is one, so no second one-time password is asked; else a new login
 * in a terminal. Close the handle when done: the login ends when its last handle is closed.
 */
export function sharedLogin(services: Services, options: TunnelOptions): Promise<SshLogin> {
  return services.logins.acquire(SshLogin.key(options), () => SshLogin.create(options, loginInTerminal(options.via)));
}

/**
 * Runs the first SSH login in a VS Code terminal so the user can type the one-time password.
 * The terminal runs ssh itself (no shell); once ssh has logged in it goes to the background
 * (`-f`), the terminal's process ends, and we close the terminal.
 */
export function loginInTerminal(label: string): (login: LoginCommand) => Promise<void> {
  return async (login) => {
    const terminal = vscode.window.createTerminal({
      name: `Swarm: SSH login to ${label}`,
      ...terminalCommand(login),
      message: `Swarm Lab logs in to ${label} once; every endpoint then rides this connection. Type your password or one-time code below.`,
      isTransient: true,
    });
    terminal.show();
    // Close the terminal once the login is done; keep it (with ssh's message) if ssh failed.
    const watch = setInterval(() => {
      const status = terminal.exitStatus;
      if (status === undefined) return;
      clearInterval(watch);
      if (status.code === 0) terminal.dispose();
    }, 250);
  };
}

/**
 * When the terminal's ssh exits after `-f`, the terminal hangs up its process group, and the
 * master ssh forked may not have left that group yet: SIGHUP would kill it. So ssh starts with
 * SIGHUP ignored (inherited through exec and fork). The fixed script takes ssh and its arguments
 * as positional parameters, never as text to interpret. Windows has neither the signal nor `-f`.
 */
function terminalCommand(login: LoginCommand): { shellPath: string; shellArgs: string[] } {
  if (process.platform === 'win32') return { shellPath: login.command, shellArgs: login.args };
  return { shellPath: '/bin/sh', shellArgs: ['-c', 'trap "" HUP; exec "$0" "$@"', login.command, ...login.args] };
}
