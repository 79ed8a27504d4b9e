// Prompts: scoped sections, variables and owner-final protection.
export { Prompts, PromptsPlugin, PromptError } from './prompts.js';
export type {
  PromptContext,
  SectionText,
  SectionDefinition,
  AssembledSection,
  VariableProvider,
  PromptAssembly,
  AssembleOptions,
  PromptProtection,
} from './types.js';
