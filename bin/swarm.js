#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// undici parses HTTP with llhttp in WebAssembly. V8 compiles it at once with its baseline compiler,
// then optimizes it on a background thread that a process must wait for at exit: ~60 ms of every
// short command. The baseline code parses as fast here (100,000 batched prompts: same CPU).
setFlagsFromString('--liftoff-only');
// A run's garbage (answers parsed, rows written) comes fast and dies young, and V8 grows the heap up to
// 4× its live size when collecting looks cheap: 1,000,000 prompts whose live set fits 384 MB peaked at
// 1.2 GB. Growing by half instead costs ~8 % more CPU and keeps the peak near the live set.
setFlagsFromString('--heap-growing-percent=50');

// Ctrl-C from the first moment: counted here while the CLI loads, then handed to src/cli/interrupt.ts.
// SIGHUP (the terminal or the ssh session to it went away) stops as cleanly, unless nohup ignores it.
const hupIgnored = () => {
  try {
    return (BigInt(`0x${/^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))[1]}`) & 1n) !== 0n;
  } catch {
    return false; // no /proc (macOS, Windows): nothing says it is ignored
  }
};
const early = { count: 0, first: undefined, handler: (signal) => (early.count++, (early.first ??= signal)), signals: ['SIGINT', 'SIGTERM', ...(process.platform === 'win32' || hupIgnored() ? [] : ['SIGHUP'])] };
globalThis[Symbol.for('swarm-lab.early-stop')] = early;
for (const signal of early.signals) process.on(signal, early.handler);
await import('../dist/cli.js');
