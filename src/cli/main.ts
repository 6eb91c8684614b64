import { Command, CommanderError } from 'commander';
import { benchCommand } from './commands/bench.ts';
import { blackboardCommand } from './commands/blackboard.ts';
import { broadcastCommand } from './commands/broadcast.ts';
import { cancelJobCommand } from './commands/cancel-job.ts';
import { pipelineCommand } from './commands/pipeline.ts';
import { planCommand } from './commands/plan.ts';
import { demoCommand } from './commands/demo.ts';
import { drainCommand } from './commands/drain.ts';
import { embedCommand } from './commands/embed.ts';
import { healthCommand } from './commands/health.ts';
import { jobsCommand } from './commands/jobs.ts';
import { loadCommand } from './commands/load.ts';
import { launchCommand } from './commands/launch.ts';
import { reduceCommand } from './commands/reduce.ts';
import { scatterCommand } from './commands/scatter.ts';
import { simCommand } from './commands/sim.ts';
import { tunnelCommand } from './commands/tunnel.ts';
import { waitCommand } from './commands/wait.ts';
import { attachCommand } from './commands/attach.ts';
import { cancelCommand } from './commands/cancel.ts';
import { mergeCommand } from './commands/merge.ts';
import { runStartCommand } from './commands/run-start.ts';
import { runsCommand } from './commands/runs.ts';
import { runExperimentCommand } from './commands/run-experiment.ts';
import { resumeCommand } from './commands/resume.ts';
import { runShardsCommand } from './commands/run-shards.ts';
import { installRunStatus } from './run-status.ts';
import { CliError, EXIT } from './exit.ts';
import { printable } from './format.ts';
import { installStop } from './interrupt.ts';

installStop();
// A detached run's status file, from the first moment (a run that fails on bad input says so there too).
installRunStatus();

// An option error is one line, then one usage line: the whole help would scroll the error away.
const output = { outputError: (text: string, write: (s: string) => void) => write(printable(text)) };
const usageHint = (cmd: Command, path: string) => `usage: ${path} ${cmd.usage()}\n(see ${path} --help)`;

const program = new Command('swarm')
  .description('Swarm Lab: drive swarms of vLLM endpoints from a hostfile: batching pool, scatter-gather, tree-reduce, simulator')
  .version('0.1.0')
  .usage('<command> [options]')
  .configureOutput(output)
  .exitOverride();
program.showHelpAfterError(usageHint(program, 'swarm'));

for (const cmd of [demoCommand(), simCommand(), healthCommand(), scatterCommand(), loadCommand(), planCommand(), reduceCommand(), waitCommand(), tunnelCommand(), launchCommand(), jobsCommand(), cancelJobCommand(), drainCommand(), benchCommand(), embedCommand(), broadcastCommand(), pipelineCommand(), blackboardCommand(), runExperimentCommand(), runsCommand(), attachCommand(), cancelCommand(), resumeCommand(), mergeCommand()]) {
  program.addCommand(cmd.configureOutput(output).showHelpAfterError(usageHint(cmd, `swarm ${cmd.name()}`)).exitOverride());
}

program.addCommand(runStartCommand().configureOutput(output).exitOverride(), { hidden: true });
program.addCommand(runShardsCommand().configureOutput(output).exitOverride(), { hidden: true });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Help and version exit 0; usage errors are bad input.
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.badInput;
  } else if (err instanceof CliError) {
    process.stderr.write(`${printable(err.message)}\n`);
    process.exitCode = err.exitCode;
  } else {
    // A bug or an unforeseen system error: one line for the user, the stack only when asked for.
    const detail = process.env.SWARM_DEBUG && err instanceof Error ? (err.stack ?? err.message) : err instanceof Error ? err.message : String(err);
    process.stderr.write(`swarm: ${printable(detail)}\n`);
    process.exitCode = EXIT.failed;
  }
}
