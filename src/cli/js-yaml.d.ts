/** The part of js-yaml 4 the CLI uses (the package ships no types; @types/js-yaml would be a second dependency for two lines). */
declare module 'js-yaml' {
  export const JSON_SCHEMA: object;
  export function load(text: string, options?: { filename?: string; schema?: object }): unknown;
}
