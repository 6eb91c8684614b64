import { copyFile, writeFile } from 'node:fs/promises';
import type { Requests, ResultRow } from '../../panel/protocol.ts';
import type { RunHistory } from './run-history.ts';

/** Writes a saved run's results to `target`: its JSONL as saved, or CSV (RFC 4180, one row per prompt). */
export async function exportRun(history: RunHistory, id: string, format: 'jsonl' | 'csv', target: string): Promise<string> {
  const saved = await history.load(id);
  if (format === 'jsonl') await copyFile(history.pathOf(saved.record.file), target);
  else await writeFile(target, toCsv(await history.rows(saved)));
  return target;
}

const COLUMNS = ['index', 'status', 'endpoint', 'prompt', 'response', 'error', 'e2el_ms', 'sent_ms', 'done_ms', 'prompt_tokens', 'completion_tokens', 'attempts', 'finish_reason', 'level', 'input'];

export function toCsv(rows: readonly ResultRow[]): string {
  const lines = [COLUMNS.join(',')];
  for (const r of rows) {
    const t = r.timings;
    lines.push(
      [
        r.index,
        r.status,
        r.endpoint,
        r.prompt,
        r.text,
        r.error,
        // E2EL as vLLM bench has it: answered prompts only (a failed one's sent_ms and done_ms still show).
        r.status !== 'ok' || t.sentMs === null ? null : Math.round((t.doneMs - t.sentMs) * 1000) / 1000,
        t.sentMs,
        t.doneMs,
        r.promptTokens,
        r.completionTokens,
        r.attempts,
        r.finishReason,
        r.level,
        r.input && Object.keys(r.input).length ? JSON.stringify(r.input) : '',
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

function csvCell(value: unknown): string {
  const s = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Two saved runs side by side: their records, and every prompt whose answer differs (by input index). */
export async function diffRuns(history: RunHistory, a: string, b: string): Promise<Requests['compareRuns']['result']> {
  const [left, right] = await Promise.all([history.load(a), history.load(b)]);
  const [rowsA, rowsB] = await Promise.all([history.rows(left), history.rows(right)]);
  // A prompt cancelled (or missing) in either run was not answered twice: it is counted apart, not as a change.
  const byIndex = (rows: ResultRow[]) => new Map(rows.filter((r) => r.status !== 'cancelled').map((r) => [r.index, answerOf(r)]));
  const ta = byIndex(rowsA);
  const tb = byIndex(rowsB);
  const indices = [...new Set([...rowsA.map((r) => r.index), ...rowsB.map((r) => r.index)])].sort((x, y) => x - y);
  const both = indices.filter((i) => ta.has(i) && tb.has(i));
  const changed = both.filter((i) => ta.get(i) !== tb.get(i)).map((index) => ({ index, a: ta.get(index)!, b: tb.get(index)! }));
  return { a: left.record, b: right.record, changed, unanswered: indices.length - both.length };
}

/** What a prompt came to: its answer, or its status and the server's message. */
function answerOf(r: ResultRow): string {
  return r.status === 'ok' ? r.text : `[${r.status}] ${r.error ?? ''}`.trim();
}
