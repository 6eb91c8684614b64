/** First Ctrl-C (or SIGTERM) calls `cancel` so finished work can be written; a second one exits at once. */
export function onInterrupt(cancel: () => void): { interrupted(): boolean; dispose(): void } {
  let count = 0;
  const handler = () => {
    if (++count > 1) process.exit(130);
    process.stderr.write('\ncancelling: keeping every finished result (Ctrl-C again to quit now)\n');
    cancel();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    interrupted: () => count > 0,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}
