/**
 * Slurm's compressed host lists (`x1000c0s[1-3,7]b0n0,login01`) as host names, in order, so a job's
 * nodes can be named without running `scontrol show hostnames` (one more command over the login).
 * Zero padding is kept (`n[08-10]` → n08 n09 n10).
 */
export function expandHostlist(list: string): string[] {
  const hosts: string[] = [];
  for (const item of splitTopLevel(list.trim())) {
    if (item) for (const host of expandOne(item)) hosts.push(host);
  }
  return hosts;
}

/** Commas outside brackets separate hosts. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '[') depth++;
    else if (text[i] === ']') depth--;
    else if (text[i] === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** One name with any number of bracketed ranges, expanded left to right. */
function expandOne(pattern: string): string[] {
  const m = /^([^[]*)\[([^\]]*)\](.*)$/.exec(pattern);
  if (!m) return [pattern];
  const [, head, ranges, tail] = m as unknown as [string, string, string, string];
  const rest = expandOne(tail);
  const out: string[] = [];
  for (const range of ranges.split(',')) {
    const [lo, hi = lo] = range.split('-') as [string, string?];
    const width = lo.length;
    for (let n = Number(lo); n <= Number(hi); n++) {
      const num = String(n).padStart(width, '0');
      for (const r of rest) out.push(`${head}${num}${r}`);
    }
  }
  return out;
}
