import { setMaxListeners } from 'node:events';
import { signalExit } from './exit.ts';
/**
 * How the CLI stops early. Installed once, before any command runs, so no moment is uncovered:
 * - a command that can stop cleanly `claim()`s the stop and watches its signal: the first Ctrl-C
 *   (or SIGTERM, SIGHUP) aborts it, a second one exits at once;
 * - unclaimed, a signal exits at once;
 * - either way the exit code names the signal (SIGINT 130, SIGTERM 143, SIGHUP 129);
 * - stdout closed by its reader (`swarm scatter | head -1`, EPIPE) aborts it too, quietly;
 * - whatever must not outlive us (an ssh master) registers a synchronous `onExit` hook.
 */
export type StopReason = 'interrupt' | 'stdout-closed';

const controller = new AbortController();
// Every lookup of a run listens to it (a thousand endpoints: a thousand listeners).
setMaxListeners(0, controller.signal);
let reason: StopReason | undefined;
/** The signal that stopped us (the first, when several came). */
let stoppedBy: NodeJS.Signals | undefined;
let claimed = false;
const exitHooks = new Set<() => void>();

/** What bin/swarm.js counted before this module loaded (and the first signal), and which signals stop us. */
interface EarlyStop {
  count: number;
  first?: NodeJS.Signals;
  handler: (signal: NodeJS.Signals) => void;
  signals: NodeJS.Signals[];
}

export function installStop(): void {
  const interrupt = (signal: NodeJS.Signals) => {
    if (reason === 'interrupt' || !claimed) process.exit(signalExit(signal));
    reason = 'interrupt';
    stoppedBy = signal;
    controller.abort();
  };
  const early = (globalThis as Record<symbol, EarlyStop | undefined>)[Symbol.for('swarm-lab.early-stop')];
  for (const signal of early?.signals ?? ['SIGINT', 'SIGTERM']) {
    process.on(signal, interrupt);
    if (early) process.off(signal, early.handler);
  }
  const first = early?.first ?? 'SIGINT';
  if (early?.count === 1) {
    // Pending: a command that claims the stop (its action starts within this turn) cancels cleanly; others exit.
    reason = 'interrupt';
    stoppedBy = first;
    controller.abort();
    setTimeout(() => claimed || process.exit(signalExit(first)), 0);
  } else if (early && early.count > 1) {
    process.exit(signalExit(first)); // stopped twice already
  }
  // Any error of stdout means its reader is gone; later writes fail the same way and are ignored.
  process.stdout.on('error', () => {
    reason ??= 'stdout-closed';
    controller.abort();
  });
  process.on('exit', () => {
    for (const hook of exitHooks) hook();
  });
}

export interface Stop {
  readonly signal: AbortSignal;
  /** Why the command was stopped, if it was. */
  reason(): StopReason | undefined;
  /** The signal that stopped it, if one did. */
  by(): NodeJS.Signals | undefined;
}

/** The calling command handles stopping from now on (finishing its output first). */
export function claimStop(): Stop {
  claimed = true;
  return { signal: controller.signal, reason: () => reason, by: () => stoppedBy };
}

/**
 * What a stopped run tells the user: Ctrl-C can be pressed again to quit at once; a SIGTERM or
 * SIGHUP comes from a process or a closed terminal, where that advice means nothing.
 */
export function stoppingLine(stop: Stop): string {
  const by = stop.by() ?? 'SIGINT';
  return by === 'SIGINT' ? 'cancelling: keeping every finished result (Ctrl-C again to quit now)' : `stopping (${by}): keeping every finished result`;
}

/** Runs `hook` if the process exits before the returned function is called. */
export function onExit(hook: () => void): () => void {
  exitHooks.add(hook);
  return () => exitHooks.delete(hook);
}

/** The signal's code when one stopped us (SIGINT 130, SIGTERM 143, SIGHUP 129), 1 when stdout's reader left early, else 0 or 1 as the work went. */
export function exitCode(stop: Stop, allOk: boolean): number {
  const why = stop.reason();
  return why === 'interrupt' ? signalExit(stop.by() ?? 'SIGINT') : why === 'stdout-closed' || !allOk ? 1 : 0;
}

/** Resolves when the command is stopped. */
export function stopped(stop: Stop): Promise<void> {
  return stop.signal.aborted ? Promise.resolve() : new Promise((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
}
