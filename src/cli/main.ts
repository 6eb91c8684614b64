import { Command, CommanderError } from 'commander';
import { benchCommand } from './commands/bench.ts';
import { broadcastCommand } from './commands/broadcast.ts';
import { demoCommand } from './commands/demo.ts';
import { embedCommand } from './commands/embed.ts';
import { healthCommand } from './commands/health.ts';
import { reduceCommand } from './commands/reduce.ts';
import { scatterCommand } from './commands/scatter.ts';
import { simCommand } from './commands/sim.ts';
import { tunnelCommand } from './commands/tunnel.ts';
import { waitCommand } from './commands/wait.ts';
import { CliError, EXIT } from './exit.ts';

const program = new Command('swarm')
  .description('Swarm Lab: drive swarms of vLLM endpoints from a hostfile: batching pool, scatter-gather, tree-reduce, simulator')
  .version('0.1.0')
  .showHelpAfterError()
  .exitOverride();

for (const cmd of [demoCommand(), simCommand(), healthCommand(), scatterCommand(), reduceCommand(), waitCommand(), tunnelCommand(), benchCommand(), embedCommand(), broadcastCommand()]) {
  program.addCommand(cmd.showHelpAfterError().exitOverride());
}

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Help and version exit 0; usage errors are bad input.
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.badInput;
  } else if (err instanceof CliError) {
    process.stderr.write(`${err.message}\n`);
    process.exitCode = err.exitCode;
  } else {
    process.stderr.write(`swarm: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = EXIT.failed;
  }
}
