/**
 * Which way a batch's prompts met the chat template, as recorded on results and comparisons: the
 * server's batch chat endpoint, the server's template rendered once around them (a skeleton), each
 * rendered by `/tokenize`, a template file rendered here, or none (raw text).
 */
export type TemplatePath = 'chat-batch' | 'skeleton' | 'tokenize' | 'file' | 'none';

/** A chat template read from a file, rendered on the client. */
export interface FileTemplate {
  kind: 'file';
  path: string;
  source: string;
  bosToken: string;
  eosToken: string;
}

/**
 * What a batched run asks for: `auto` uses the server's chat template where the endpoints have one
 * (the batch chat endpoint, else their template rendered through `/tokenize`), raw text elsewhere
 * (with one warning); `server` insists (prompts on endpoints that cannot fail); `none` sends raw
 * text; a file template renders client-side.
 */
export type TemplateSetting = 'auto' | 'server' | 'none' | FileTemplate;

/** What each path means on the wire, for comparisons and the panel. */
export const TEMPLATE_PATH_NOTES: Readonly<Record<TemplatePath, string>> = {
  'chat-batch': 'POST /v1/chat/completions/batch with the list of conversations: the server applies its chat template (vLLM ≥ 0.19)',
  skeleton: "POST /v1/completions with prompts placed in the server's chat template, rendered once per model and system prompt (POST /tokenize)",
  tokenize: "POST /v1/completions with token-id lists, each prompt rendered by the server's chat template (POST /tokenize per prompt: the template rewrites content)",
  file: 'POST /v1/completions with prompts rendered client-side from a chat template file',
  none: 'POST /v1/completions with the prompt list: raw text, no chat template',
};
