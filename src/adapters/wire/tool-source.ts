/**
 * What the SDK tool adapters (`toAiSdkTools`, `toAgentsSdkTools`) share: reading
 * `(tools, { scope?, shown?, ctx? })` once, listing the tools to show under the provider
 * name rule, and running one call through `Tools.execute` without ever throwing.
 */
import { SystemContext } from '../../context/system-context.js';
import { describeValue } from '../../util/describe-value.js';
import { readField } from '../../util/read-field.js';
import { errorResult } from '../../tools/execution.js';
import { readShown } from '../../tools/shown.js';
import { Tools } from '../../tools/tools.js';
import type { ExecuteOptions, ShownTools, ToolResult, ToolSchema } from '../../tools/types.js';
import { checkToolNames } from './tool-names.js';

/** @internal One call of the model, as an SDK hands it to a tool. */
export interface SdkCall {
  readonly callId: string;
  readonly name: string;
  readonly arguments: unknown;
  readonly signal?: AbortSignal | undefined;
}

/** @internal The tools to show and how to run them. */
export interface ToolSource {
  /** The tools to show, in order (names checked against the provider rule). */
  readonly schemas: readonly ToolSchema[];
  /** Runs one call through `Tools.execute`; never rejects. */
  run(call: SdkCall): Promise<ToolResult>;
}

/**
 * @internal Reads `tools` and `options` (`scope`, `shown`, `ctx`, plus `extra` keys the
 * caller reads itself), once each.
 *
 * @throws TypeError naming `where` and the offending value.
 */
export function readToolSource(where: string, tools: unknown, options: unknown, extra: readonly string[]): { source: ToolSource; options: Record<string, unknown> } {
  if (!(tools instanceof Tools)) {
    throw new TypeError(`${where}: tools must be a Tools view (ctx.get(Tools)), got ${describeValue(tools)}.`);
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${where}: options must be an object { scope?, shown?, ctx? }, got ${describeValue(options)}.`);
  }
  const known = ['scope', 'shown', 'ctx', ...extra];
  const read: Record<string, unknown> = {};
  for (const k of Object.keys(options)) {
    if (!known.includes(k)) throw new TypeError(`${where}: unknown option "${k}"; the options are ${known.join(', ')}.`);
  }
  for (const k of known) read[k] = readField(options, k, where, 'options');
  const ctx = read.ctx;
  if (ctx !== undefined && !(ctx instanceof SystemContext)) {
    throw new TypeError(`${where}: ctx must be the calling context (a SystemContext, e.g. the turn's), got ${describeValue(ctx)}.`);
  }
  // the model is shown the tools of `tools`: its calls must run on the same server's tools
  if (ctx !== undefined && (ctx as SystemContext).server !== tools.context.server) {
    throw new TypeError(
      `${where}: ctx belongs to another server than the tools view, so the model would be shown one server's tools and its calls would run the other's; ` +
        'pass a context of the tools view\'s server (e.g. the turn\'s context, with turnCtx.get(Tools)).',
    );
  }
  const scope = read.scope;
  if (scope !== undefined && (scope === null || (typeof scope !== 'object' && typeof scope !== 'function'))) {
    throw new TypeError(`${where}: scope must be a scope key (an object) or omitted, got ${describeValue(scope)}; for a context pass scopeOf(ctx).`);
  }
  const shownValue = read.shown as ShownTools | undefined;
  const shown = readShown({ shown: shownValue }, '(any)');
  if (typeof shown === 'string') throw new TypeError(`${where}: ${shown.replace(/^.*?: /, '')}.`);

  const all = tools.schemas(scope as object | undefined);
  let schemas: ToolSchema[];
  if (shown === undefined) schemas = all;
  else {
    const byName = new Map(all.map((s) => [s.name, s]));
    const entries = Array.isArray(shownValue) ? undefined : (shownValue as { tools: readonly unknown[] }).tools;
    schemas = [];
    shown.forEach((name, i) => {
      // An assembly's entries are what the model is shown (a prompt/assemble listener may
      // have rewritten a description); bare names are looked up in the registry.
      const e = entries?.[i] as Partial<ToolSchema> | undefined;
      const fromAssembly = e !== undefined && typeof e.description === 'string' && e.parameters !== null && typeof e.parameters === 'object' && !Array.isArray(e.parameters);
      const s = fromAssembly ? { name, description: e.description as string, parameters: e.parameters as ToolSchema['parameters'] } : byName.get(name);
      if (s !== undefined) schemas.push(s);
    });
  }
  checkToolNames(schemas, where);

  const view = ctx === undefined ? tools : (ctx as SystemContext).get(Tools);
  const callScope = scope ?? (ctx === undefined ? undefined : tools.scope);
  const executeOptions: ExecuteOptions | undefined = shownValue === undefined ? undefined : { shown: shownValue };
  const inFlight = new Set<string>();
  const source: ToolSource = {
    schemas,
    async run(call) {
      const { callId } = call;
      if (callId !== '' && inFlight.has(callId)) {
        return errorResult(callId, {
          code: 'INVALID_ARGS',
          message: `the model sent two calls with the id "${callId}" at once (tool "${call.name}"); only the first one runs`,
        });
      }
      inFlight.add(callId);
      try {
        const c = {
          callId,
          name: call.name,
          arguments: call.arguments,
          ...(callScope === undefined ? {} : { scope: callScope }),
          ...(call.signal === undefined ? {} : { signal: call.signal }),
        };
        return await view.execute(c, executeOptions);
      } finally {
        inFlight.delete(callId);
      }
    },
  };
  return { source, options: read };
}
