// Prompts: scoped sections, variables and owner-final protection.
import './events.js'; // the prompts feature's event and reserved prefixes
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
