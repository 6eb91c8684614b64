export { parseHarmony, type HarmonyAnswer } from './harmony.ts';
export { loadTemplateFile, TemplateFileError } from './template-file.ts';
export { TEMPLATE_PATH_NOTES, type FileTemplate, type TemplatePath, type TemplateSetting } from './setting.ts';
