#!/usr/bin/env node
// Ctrl-C from the first moment: counted here while the CLI loads, then handed to src/cli/interrupt.ts.
const early = { count: 0, handler: () => early.count++ };
globalThis[Symbol.for('swarm-lab.early-stop')] = early;
process.on('SIGINT', early.handler);
process.on('SIGTERM', early.handler);
await import('../dist/cli.js');
