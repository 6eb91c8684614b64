import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** A key command as a site gives one (ALCF's `inference_auth_token.py get_access_token`): prints `token-N`, N counting its runs. */
export interface TokenCommand {
  argv: string[];
  /** The same, as `--api-key-command` takes it (each word quoted). */
  line: string;
  runs(): Promise<number>;
}

const SCRIPT = "import { readFileSync, writeFileSync } from 'node:fs';\nconst f = process.argv[2];\nlet n = 0;\ntry { n = Number(readFileSync(f, 'utf8')); } catch {}\nwriteFileSync(f, String(n + 1));\nconsole.log(`token-${n + 1}`);\n";

/** Writes the command into `dir`; its run count is kept in `<name>.runs` (passed as an argument: it runs in a scrubbed environment). */
export async function tokenCommand(dir: string, name: string): Promise<TokenCommand> {
  const script = join(dir, `${name}.mjs`);
  const counter = join(dir, `${name}.runs`);
  await writeFile(script, SCRIPT);
  const argv = [process.execPath, script, counter];
  return { argv, line: argv.map((w) => `'${w}'`).join(' '), runs: async () => Number(await readFile(counter, 'utf8').catch(() => '0')) };
}
