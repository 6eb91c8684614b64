/** Which way a batch's prompts reached `/v1/completions`, as recorded on results and comparisons. */
export type TemplatePath = 'server' | 'file' | 'none';

/** A chat template read from a file, rendered on the client. */
export interface FileTemplate {
  kind: 'file';
  path: string;
  source: string;
  bosToken: string;
  eosToken: string;
}

/**
 * What a batched run asks for: `auto` renders through the server's `/tokenize` where the endpoints
 * answer it with `messages`, raw elsewhere (with one warning); `server` insists (endpoints that
 * cannot are left out); `none` sends raw text; a file template renders client-side.
 */
export type TemplateSetting = 'auto' | 'server' | 'none' | FileTemplate;

/** What each path means on the wire, for comparisons and the panel. */
export const TEMPLATE_PATH_NOTES: Readonly<Record<TemplatePath, string>> = {
  server: "POST /v1/completions with token-id lists rendered by the server's chat template (POST /tokenize with messages)",
  file: 'POST /v1/completions with prompts rendered client-side from a chat template file',
  none: 'POST /v1/completions with the prompt list: raw text, no chat template',
};
