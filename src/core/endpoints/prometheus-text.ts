/**
 * Prometheus' text exposition format (version 0.0.4, what vLLM's `/metrics` serves), read into
 * samples. Only what a scraper needs: `# HELP` / `# TYPE` lines and blank lines are skipped, a
 * sample is `name{label="value",…} value [timestamp]`, label values keep their escapes (`\\`, `\"`,
 * `\n`) undone. A line that is none of these is skipped, never thrown on: one odd line from a
 * proxy or a newer server must not cost the rest of the reading.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** What ends a sample's name: its labels, a space, a tab, a carriage return. */
const NAME_END = new Set([123, 32, 9, 13]);
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/**
 * The samples of `text`; with `keep`, only those of the names it keeps (the rest are passed over
 * at their name: a vLLM server's histogram buckets are most of its lines, and a swarm of 1,000 is
 * read every few seconds).
 */
export function parsePrometheusText(text: string, keep?: (name: string) => boolean): Sample[] {
  const samples: Sample[] = [];
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const sample = parseLine(text, start, end, keep);
    if (sample) samples.push(sample);
    start = end + 1;
  }
  return samples;
}

/** The sample on text[start, end), or null (a comment, a blank line, a name not kept, a line it cannot read). */
function parseLine(text: string, start: number, end: number, keep: ((name: string) => boolean) | undefined): Sample | null {
  while (start < end && (text.charCodeAt(start) === 32 || text.charCodeAt(start) === 9)) start++;
  if (start >= end || text.charCodeAt(start) === 35 /* # */) return null;
  // The name ends at its labels or its value; it is checked whole only if kept.
  let at = start;
  while (at < end && !NAME_END.has(text.charCodeAt(at))) at++;
  const name = text.slice(start, at);
  if ((keep && !keep(name)) || !NAME.test(name)) return null;
  const line = text.slice(at, end);
  at = 0;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at = parseLabels(line, at + 1, labels);
    if (at < 0) return null;
  }
  // The value, then perhaps a timestamp (ignored: the scrape's own time is what a reader compares).
  const [value] = line.slice(at).trim().split(/\s+/);
  const number = sampleValue(value ?? '');
  return number === null ? null : { name, labels, value: number };
}

/** Reads `name="value",…}` from `at`; the index after `}`, or -1 when the labels are malformed. */
function parseLabels(line: string, at: number, into: Record<string, string>): number {
  for (;;) {
    while (line[at] === ' ' || line[at] === ',') at++;
    if (line[at] === '}') return at + 1;
    const label = LABEL_NAME.exec(line.slice(at, at + 200))?.[0];
    if (!label) return -1;
    at += label.length;
    while (line[at] === ' ') at++;
    if (line[at] !== '=' || line[at + 1] !== '"') return -1;
    at += 2;
    let value = '';
    for (;;) {
      const c = line[at];
      if (c === undefined) return -1;
      if (c === '"') break;
      if (c === '\\') {
        const next = line[at + 1];
        value += next === 'n' ? '\n' : (next ?? '');
        at += 2;
      } else {
        value += c;
        at++;
      }
    }
    into[label] = value;
    at++;
  }
}

function sampleValue(text: string): number | null {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
  return Number(text);
}
