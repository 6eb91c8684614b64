/** Polls `probe` every 25 ms until it gives something truthy (returned), or throws after `timeoutMs`. */
export async function until<T>(probe: () => T | undefined | false, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
