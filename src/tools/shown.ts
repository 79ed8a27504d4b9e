/**
 * `Tools.execute(call, { shown })`: what the model was shown is what can run.
 * `shown` is an assembly (anything with `tools: readonly { name }[]`, such as a
 * `PromptAssembly`) or the shown tool names. Reading it never throws: a malformed value
 * is an `INVALID_ARGS` message.
 */
import { describeValue } from '../context/token.js';
import { errorText } from '../util/error-text.js';

/** @internal The shown tool names; `undefined` when no `shown` was given. */
export type Shown = readonly string[] | undefined;

/**
 * @internal Reads `options.shown` once. Returns the shown names (`undefined` when not
 * given), or a message saying why the value is malformed.
 */
export function readShown(options: unknown, toolName: string): Shown | string {
  const where = `Tools.execute(call, { shown }) for tool "${toolName}"`;
  if (options === null || typeof options !== 'object') return `${where}: options must be an object like { shown }, got ${describeValue(options)}`;
  let shown: unknown;
  try {
    shown = (options as { shown?: unknown }).shown;
  } catch (err) {
    return `${where}: reading options.shown threw: ${errorText(err)}`;
  }
  if (shown === undefined) return undefined;
  try {
    if (Array.isArray(shown)) {
      const names = Array.from(shown as unknown[]);
      for (let i = 0; i < names.length; i++) {
        if (typeof names[i] !== 'string') return `${where}: shown[${i}] must be a tool name (a string), got ${describeValue(names[i])}`;
      }
      return names as string[];
    }
    if (shown === null || typeof shown !== 'object') {
      return `${where}: shown must be an assembly ({ tools: { name }[] }, e.g. what prompts.assemble() returned) or an array of tool names, got ${describeValue(shown)}`;
    }
    const tools = (shown as { tools?: unknown }).tools;
    if (!Array.isArray(tools)) {
      return `${where}: shown must be an assembly whose tools is an array of { name } (e.g. what prompts.assemble() returned) or an array of tool names; its tools is ${describeValue(tools)}`;
    }
    const list = Array.from(tools as unknown[]);
    const names = new Array<string>(list.length);
    for (let i = 0; i < list.length; i++) {
      const t = list[i];
      const n = t !== null && typeof t === 'object' ? (t as { name?: unknown }).name : undefined;
      if (typeof n !== 'string') return `${where}: shown.tools[${i}] must be a tool schema with a string name, got ${describeValue(t)}`;
      names[i] = n;
    }
    return names;
  } catch (err) {
    return `${where}: reading shown threw: ${errorText(err)}`;
  }
}

/** @internal Whether `name` is among the shown names. */
export function wasShown(shown: readonly string[], name: string): boolean {
  return shown.includes(name);
}
