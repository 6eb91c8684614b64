import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { mergeShards, MergeError, serversFileOf, writeServerContext, type ServerContext } from '../../core/index.ts';
import { CliError, EXIT } from '../exit.ts';
import { printable } from '../format.ts';
import { checkOutPath } from '../output.ts';

interface MergeFlags {
  out: string;
  incomplete?: boolean;
}

export function mergeCommand(): Command {
  return new Command('merge')
    .usage('--out FILE [SHARD_FILE…] [options]')
    .description("merge a sharded run's results files into one, in input order (default: the FILE.shard-R-of-S.jsonl files beside --out)")
    .argument('[shards...]', "the shards' results files")
    .requiredOption('--out <file>', 'the merged results file')
    .option('--incomplete', 'merge what there is when a shard is missing or unfinished (its prompts get no row; exit 1)')
    .action(async (given: string[], flags: MergeFlags) => {
      const files = given.length ? given : shardFilesBeside(flags.out);
      if (!files.length) throw new CliError(`no shard files given, and none like ${printable(shardPattern(flags.out))} beside ${printable(flags.out)}`);
      await checkOutPath(flags.out, files.map((f) => ['shard', f] as [string, string]));
      let report;
      try {
        report = await mergeShards(flags.out, files, { incomplete: Boolean(flags.incomplete) });
      } catch (err) {
        throw err instanceof MergeError ? new CliError(`merge: ${err.message}`) : err;
      }
      await mergeServerContext(flags.out, files);
      const int = (n: number) => n.toLocaleString('en-US');
      process.stderr.write(`merged ${files.length} shard(s): ${int(report.rows)} rows in input order to ${printable(flags.out)}${report.missing ? `; ${int(report.missing)} prompts have no row` : ''}${report.notOk ? `; ${int(report.notOk)} not ok` : ''}\n`);
      process.exitCode = report.missing || report.notOk ? EXIT.failed : EXIT.ok;
    });
}

const shardPattern = (out: string) => `${basename(out).replace(/\.jsonl$/, '')}.shard-R-of-S${out.endsWith('.jsonl') ? '.jsonl' : ''}`;

/** `results.shard-0-of-4.jsonl` … beside `results.jsonl`, by rank. */
function shardFilesBeside(out: string): string[] {
  const name = basename(out);
  const stem = name.endsWith('.jsonl') ? name.slice(0, -'.jsonl'.length) : name;
  const ext = name.endsWith('.jsonl') ? '.jsonl' : '';
  // A shard's results file, or the description a shard writes as it starts (a killed one has no results file).
  const re = new RegExp(`^${stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.shard-(\\d+)-of-(\\d+)${ext.replace('.', '\\.')}(?:\\.shard\\.json)?$`);
  let names: string[];
  try {
    names = readdirSync(dirname(out) || '.');
  } catch {
    return [];
  }
  const found = new Map<string, number>();
  for (const n of names) {
    const m = re.exec(n);
    if (m) found.set(join(dirname(out), n.replace(/\.shard\.json$/, '')), Number(m[1]));
  }
  return [...found].sort((a, b) => a[1] - b[1]).map(([file]) => file);
}

/** What answered each shard (`<shard>.servers.json`), together beside the merged file: every endpoint of the run once. */
export async function mergeServerContext(out: string, files: readonly string[]): Promise<void> {
  const all: ServerContext[] = [];
  for (const file of files) {
    const text = await readFile(serversFileOf(file), 'utf8').catch(() => undefined);
    let context: ServerContext[];
    try {
      context = JSON.parse(text ?? '') as ServerContext[];
    } catch {
      return; // a shard without one (stopped early, or cut): no partial context is written
    }
    for (const endpoint of context) all.push(endpoint); // 10,000 endpoints a shard: no spread into a call
  }
  await writeServerContext(out, all).catch((err: unknown) => process.stderr.write(`warning: the server context was not written beside the results: ${printable((err as Error).message)}\n`));
}
