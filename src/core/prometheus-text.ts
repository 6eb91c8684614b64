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

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const sample = parseLine(line);
    if (sample) samples.push(sample);
  }
  return samples;
}

function parseLine(line: string): Sample | null {
  const name = NAME.exec(line)?.[0];
  if (!name) return null;
  let at = name.length;
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
