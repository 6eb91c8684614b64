import { readFile } from 'node:fs/promises';
import { Template } from '@huggingface/jinja';
import type { FileTemplate } from './setting.ts';
import type { ChatMessage, TemplateKwargs } from './messages.ts';

/** A chat template file that cannot be used; the message names the file and what is wrong. */
export class TemplateFileError extends Error {
  override name = 'TemplateFileError';
}

/**
 * Reads a chat template: a `tokenizer_config.json` (its `chat_template`, the `default` one of a
 * named list, and its `bos_token`/`eos_token`) or a bare `.jinja` file. The template is compiled
 * once here so a broken one fails before any request.
 */
export async function loadTemplateFile(path: string): Promise<FileTemplate> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new TemplateFileError(`cannot read chat template ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const template = path.endsWith('.json') ? fromTokenizerConfig(path, text) : { kind: 'file' as const, path, source: text, bosToken: '', eosToken: '' };
  try {
    new Template(template.source);
  } catch (err) {
    throw new TemplateFileError(`chat template in ${path} does not parse: ${(err as Error).message}`);
  }
  return template;
}

function fromTokenizerConfig(path: string, text: string): FileTemplate {
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new TemplateFileError(`${path} is not JSON: ${(err as Error).message}`);
  }
  let source = config['chat_template'];
  // Some tokenizers ship several named templates; the chat one is `default`.
  if (Array.isArray(source)) source = (source as Array<{ name?: unknown; template?: unknown }>).find((t) => t?.name === 'default')?.template;
  if (typeof source !== 'string' || !source) throw new TemplateFileError(`${path} has no chat_template (a string, or a list with a "default" entry)`);
  return { kind: 'file', path, source, bosToken: specialToken(config['bos_token']), eosToken: specialToken(config['eos_token']) };
}

/** `bos_token` is a string or an AddedToken object `{content: …}`. */
function specialToken(value: unknown): string {
  if (typeof value === 'string') return value;
  const content = (value as { content?: unknown } | null)?.content;
  return typeof content === 'string' ? content : '';
}

/** Renders conversations as the server would before tokenizing, ending with the assistant's opening. */
export class FileRenderer {
  private readonly template: Template;

  constructor(private readonly file: FileTemplate) {
    this.template = new Template(file.source);
  }

  render(messages: readonly ChatMessage[], kwargs: TemplateKwargs): string {
    return this.template.render({
      ...kwargs,
      messages,
      add_generation_prompt: true,
      bos_token: this.file.bosToken,
      eos_token: this.file.eosToken,
    });
  }
}
