import { Option, type Command } from 'commander';

/** The one SSH login of runs/attach/cancel (the pattern commands have these among their reach options). */
export function addLoginOptions(cmd: Command): Command {
  return cmd
    .option('--via <[user@]host[:port]>', 'the runs are on this login node (one SSH login, ControlMaster)')
    .addOption(new Option('--ssh-option <Key=value>', 'extra ssh -o option (repeatable)').argParser((v: string, prev: string[]) => [...prev, v]).default([], 'none'))
    .option('--ssh-path <path>', 'the ssh client to run', 'ssh')
    .option('--ssh-config <file>', 'ssh config file instead of ~/.ssh/config');
}
