/** Walltimes as the schedulers write them. */

/**
 * Seconds in `[D-]HH:MM:SS`, `MM:SS`, plain minutes (Slurm's `--time=30`), or PBS's plain seconds
 * (`walltime=3600`, with `plainUnit: 'seconds'`). Undefined for UNLIMITED, N/A and the like.
 */
export function parseDuration(text: string | undefined, plainUnit: 'minutes' | 'seconds' = 'minutes'): number | undefined {
  if (!text) return undefined;
  const m = /^\s*(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?\s*$/.exec(text);
  if (!m) return undefined;
  const [, days, a, b, c] = m;
  const d = Number(days ?? 0) * 86_400;
  if (c !== undefined) return d + Number(a) * 3600 + Number(b) * 60 + Number(c);
  if (b !== undefined) return days !== undefined ? d + Number(a) * 3600 + Number(b) * 60 : Number(a) * 60 + Number(b);
  if (days !== undefined) return d + Number(a) * 3600;
  return Number(a) * (plainUnit === 'minutes' ? 60 : 1);
}

/** `HH:MM:SS`, hours past 24 kept (both schedulers read that). */
export function formatWalltime(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor((s % 3600) / 60))}:${pad(s % 60)}`;
}

/** `1 h 05 min`, `4 min 10 s`, `12 s`: a time left, for people. */
export function humanDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${s} s`;
}

/**
 * How long before a job's walltime a run on its servers stops: the scheduler ends them right at
 * it, and a run still sending then would see them die (failovers, failures) instead of stopping
 * cleanly. Seconds of slack for the clocks of this machine and the scheduler's.
 */
export const WALLTIME_MARGIN_S = 10;

/** When a run on a job ending at `end` stops (cancelled by walltime). */
export function walltimeStop(end: Date): Date {
  return new Date(end.getTime() - WALLTIME_MARGIN_S * 1000);
}
