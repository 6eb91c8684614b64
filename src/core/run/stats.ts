/**
 * The statistics every view shows (panel, status bar, CLI): one median, one speed-up. No imports,
 * so the webview bundle can use it too, and every module of the core may.
 */

/** What the arm statistics read of a comparison's round (compare.ts's ArmRound is one). */
export interface ArmFigures {
  arm: 'batched' | 'individual';
  summary: { wallMs: number; httpRequests: number; requestsByPath: Record<string, number> };
}

/** The middle value; with an even count, the mean of the two middle ones. NaN for none. */
export function median(values: readonly number[]): number {
  const v = [...values].sort((a, b) => a - b);
  const n = v.length;
  if (!n) return NaN;
  const mid = n >> 1;
  return n % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** Median wall time of one arm over its finished rounds, ms; null without one. */
export function medianWall(rounds: readonly ArmFigures[], arm: ArmFigures['arm']): number | null {
  const walls = rounds.filter((r) => r.arm === arm).map((r) => r.summary.wallMs);
  return walls.length ? median(walls) : null;
}

/** How many times faster batched was than individual (median wall times); null without both arms. */
export function speedup(rounds: readonly ArmFigures[]): number | null {
  const b = medianWall(rounds, 'batched');
  const i = medianWall(rounds, 'individual');
  return b && i ? i / b : null;
}

/** Linear interpolation between closest ranks of sorted values, as numpy.percentile (which vLLM bench uses). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo);
}

/** Every HTTP request an arm sent over all its rounds, by path: the first round pays for what later rounds reuse (model lookups, the template's skeleton). */
export function armRequests(rounds: readonly ArmFigures[], arm: ArmFigures['arm']): { total: number; byPath: Record<string, number> } {
  const byPath: Record<string, number> = {};
  let total = 0;
  for (const r of rounds) {
    if (r.arm !== arm) continue;
    total += r.summary.httpRequests;
    for (const [path, n] of Object.entries(r.summary.requestsByPath)) byPath[path] = (byPath[path] ?? 0) + n;
  }
  return { total, byPath: Object.fromEntries(Object.entries(byPath).sort((x, y) => y[1] - x[1])) };
}
