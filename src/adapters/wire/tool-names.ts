/**
 * The tool-name rule OpenAI and Anthropic share, checked when tools are converted so a bad
 * name fails where it was made instead of at request time.
 */
import { describeValue } from '../../util/describe-value.js';
import type { ToolSchema } from '../../tools/types.js';

/** The names OpenAI (Chat Completions and Responses) and Anthropic accept for function tools. */
export const PROVIDER_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * @internal Checks the tool list and every name; throws one TypeError naming every tool
 * whose name the provider would refuse.
 */
export function checkToolNames(schemas: unknown, where: string): readonly ToolSchema[] {
  if (!Array.isArray(schemas)) {
    throw new TypeError(`${where}: tools must be an array of tool schemas (tools.schemas() or assembly.tools), got ${describeValue(schemas)}.`);
  }
  const list = schemas as unknown[];
  list.forEach((s, i) => {
    if (s === null || typeof s !== 'object') throw new TypeError(`${where}: tools[${i}] must be a tool schema { name, description, parameters }, got ${describeValue(s)}.`);
    const p = (s as ToolSchema).parameters;
    if (p === null || typeof p !== 'object' || Array.isArray(p)) {
      throw new TypeError(`${where}: tools[${i}] (${JSON.stringify((s as ToolSchema).name)}) has parameters ${describeValue(p)}; a JSON Schema object is expected.`);
    }
  });
  const bad = (list as ToolSchema[]).filter((s) => typeof s.name !== 'string' || !PROVIDER_TOOL_NAME.test(s.name)).map((s) => JSON.stringify(s.name) ?? String(s.name));
  if (bad.length > 0) {
    throw new TypeError(
      `${where}: tool name${bad.length > 1 ? 's' : ''} ${bad.join(', ')} ${bad.length > 1 ? 'do' : 'does'} not match ${PROVIDER_TOOL_NAME.source} ` +
        '(the provider would refuse the request); register the tool under such a name (for MCP tools, mountMcpTools({ prefix }) with "_" or "-" separators) ' +
        'or hide it from this turn with Tools.restrict.',
    );
  }
  return list as ToolSchema[];
}
