/**
 * The agent kinds of a server: `agents.define(name, { setup, parentFilter? })` checks and
 * defines one, and wherever an agent is made (`agents.create({ kind })`, `agents.runTask`,
 * durable sessions) a kind given by object or by name is resolved here.
 */
import { ParentFilter } from '../context/parent-filter.js';
import { describeValue } from '../context/token.js';
import { readField } from '../util/read-field.js';
import { AgentKind, type AgentSetup } from './kind.js';
import type { AgentRegistry } from './registry.js';

/** The longest kind name `agents.define` accepts, in UTF-16 code units. */
const MAX_KIND_NAME = 1024;

/** @internal What the kind lookups use of an `Agents` view. */
interface AgentsView {
  /** @internal */
  readonly _registry: AgentRegistry;
}

/** @internal The behaviour of {@link Agents.define}: validates, defines and returns the kind (throws a `TypeError` on bad input). */
export function defineKind(registry: AgentRegistry, name: unknown, options: unknown): AgentKind {
  const call = 'Agents.define';
  checkKindName(name, `${call}(kind, options)`);
  const named = `${call}(${quote(name)}, options)`;
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${named}: options must be an object { setup, parentFilter? }, got ${describeValue(options)}.`);
  }
  const setup = readOption(options, 'setup', named);
  if (typeof setup !== 'function') {
    throw new TypeError(`${call}(${quote(name)}, { setup }): setup must be a function (agentCtx) => void | Promise<void>, got ${describeValue(setup)}.`);
  }
  const parentFilter = readOption(options, 'parentFilter', named);
  if (parentFilter !== undefined && !isParentFilter(parentFilter)) {
    throw new TypeError(
      `${call}(${quote(name)}, { parentFilter }): parentFilter must be made by ParentFilter.allowOnly([...]) or ParentFilter.allowAllExcept([...]), got ${describeValue(parentFilter)}.`,
    );
  }
  if (registry.kinds.has(name)) {
    throw new TypeError(`${named}: the agent kind ${quote(name)} is already defined on this server; kinds are defined once per server (use the one defined, or choose another name).`);
  }
  const kind = new AgentKind(name, setup as AgentSetup, parentFilter as ParentFilter | undefined);
  registry.kinds.set(name, kind);
  return kind;
}

/**
 * @internal The kind `kindOrName` stands for on the server of `registry`: an
 * {@link AgentKind} defined there, or the name of one. `where` is how the message names
 * the call and the option, e.g. `Agents.create({ id: "r-1", kind })`.
 *
 * @throws TypeError naming the kinds that exist for an unknown name, and for a kind of
 *   another server or a value that is neither a kind nor a string.
 */
export function resolveKind(registry: AgentRegistry, kindOrName: unknown, where: string): AgentKind {
  if (AgentKind._is(kindOrName)) {
    if (registry.kinds.get(kindOrName.name) === kindOrName) return kindOrName;
    throw new TypeError(`${where}: ${kindOrName} was defined on another server; define it on this one with agents.define(name, { setup }).`);
  }
  if (typeof kindOrName !== 'string') {
    throw new TypeError(`${where}: kind must be an AgentKind (made by agents.define) or the name of one, got ${describeValue(kindOrName)}.`);
  }
  const found = registry.kinds.get(kindOrName);
  if (found !== undefined) return found;
  throw new TypeError(`${where}: unknown agent kind ${quote(kindOrName)}; ${definedKinds(registry)}.`);
}

/**
 * @internal The kind `kindOrName` stands for on the server of an `Agents` view (what a
 * durable session's open uses for its `kind` option): the {@link AgentKind} itself, or the
 * kind of that name. `where` names the call and the option in the message, e.g.
 * `Sessions.open({ sessionId: "s-1", kind })`.
 *
 * @throws TypeError naming the kinds that exist for an unknown name, and for a kind of
 *   another server or a value that is neither a kind nor a string.
 */
export function kindOf(agents: AgentsView, kindOrName: unknown, where: string): AgentKind {
  return resolveKind(agents._registry, kindOrName, where);
}

/** @internal The kind named `name` on the server of an `Agents` view, `undefined` when none is defined (no throw). */
export function findKind(agents: AgentsView, name: string): AgentKind | undefined {
  return agents._registry.kinds.get(name);
}

/** `the kinds defined on this server are "a", "b"` (or that there are none, and how to define one). */
function definedKinds(registry: AgentRegistry): string {
  const names = [...registry.kinds.keys()];
  if (names.length === 0) return 'no kind is defined on this server (define one with agents.define(name, { setup }))';
  const shown = names.slice(0, 20).map(quote).join(', ');
  return `the kinds defined on this server are ${shown}${names.length > 20 ? ` and ${names.length - 20} more` : ''}`;
}

/** A kind name in a message: quoted, control characters escaped, a long one cut. */
function quote(name: string): string {
  return JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name);
}

/** Throws the `TypeError` of a kind name that is not a non-empty string of at most 1024 characters without NUL. */
function checkKindName(name: unknown, where: string): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_KIND_NAME || name.includes('\0')) {
    const why = typeof name !== 'string' ? describeValue(name) : name.length === 0 ? 'an empty string' : name.length > MAX_KIND_NAME ? `a string of ${name.length} characters` : `${quote(name)}, which contains a NUL character`;
    throw new TypeError(`${where}: kind must be a non-empty string of at most ${MAX_KIND_NAME} characters without NUL characters, got ${why}.`);
  }
}

/** `instanceof ParentFilter`, false (not a throw) for a proxy whose traps throw. */
function isParentFilter(value: unknown): boolean {
  try {
    return value instanceof ParentFilter;
  } catch {
    return false;
  }
}

/** Reads `options[field]` once; a throwing getter or trap becomes a TypeError naming the call and the field. */
function readOption(options: object, field: string, where: string): unknown {
  return readField(options, field, where, 'options');
}
