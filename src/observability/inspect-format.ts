/**
 * @internal The two renderings of an `inspect` tree (an indented text tree and a Mermaid
 * flowchart), and the check of a tree given to `formatInspection`. No recursion: a chain
 * of thousands of contexts renders without growing the stack.
 */
import { describeValue } from '../util/describe-value.js';
import { errorText } from '../util/error-text.js';
import type { InspectNode } from './inspect-types.js';

const KINDS: ReadonlySet<string> = new Set(['server', 'context', 'agent', 'session']);

/** @internal Checks that `tree` is an `inspect` tree (or the same data read back from JSON); a TypeError names the first bad field. */
export function readTree(tree: unknown): InspectNode {
  const seen = new Set<object>();
  const stack: [unknown, string][] = [[tree, 'tree']];
  while (stack.length > 0) {
    const [node, path] = stack.pop() as [unknown, string];
    try {
      checkNode(node, path, seen, stack);
    } catch (err) {
      if (err instanceof TypeError && err.message.startsWith('formatInspection(')) throw err;
      throw new TypeError(`formatInspection(tree): reading ${path} threw (${errorText(err)}); pass the tree inspect() returned.`, { cause: err });
    }
  }
  return tree as InspectNode;
}

function bad(path: string, what: string, value: unknown): TypeError {
  return new TypeError(`formatInspection(tree): ${path} must be ${what}, got ${describeValue(value)}; pass the tree inspect() returned.`);
}

function checkNode(node: unknown, path: string, seen: Set<object>, stack: [unknown, string][]): void {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) throw bad(path, 'a node object { kind, label, depth, disposed, locals, children }', node);
  if (seen.has(node)) throw new TypeError(`formatInspection(tree): ${path} is a node met before (the tree has a cycle or a shared node); pass the tree inspect() returned.`);
  seen.add(node);
  const n = node as Record<string, unknown>;
  if (typeof n.kind !== 'string' || !KINDS.has(n.kind)) throw bad(`${path}.kind`, "'server', 'context', 'agent' or 'session'", n.kind);
  if (typeof n.label !== 'string') throw bad(`${path}.label`, 'a string', n.label);
  if (typeof n.depth !== 'number' || !Number.isInteger(n.depth) || n.depth < -1) throw bad(`${path}.depth`, 'an integer >= -1', n.depth);
  if (typeof n.disposed !== 'boolean') throw bad(`${path}.disposed`, 'a boolean', n.disposed);
  checkStrings(n.locals, `${path}.locals`);
  if (n.agent !== undefined) checkAgent(n.agent, `${path}.agent`);
  if (n.session !== undefined) {
    const s = n.session as Record<string, unknown> | null;
    if (s === null || typeof s !== 'object') throw bad(`${path}.session`, 'an object { id, committedTurn }', s);
    if (typeof s.id !== 'string') throw bad(`${path}.session.id`, 'a string', s.id);
    if (typeof s.committedTurn !== 'number' || !Number.isSafeInteger(s.committedTurn) || s.committedTurn < 0) {
      throw bad(`${path}.session.committedTurn`, 'an integer >= 0', s.committedTurn);
    }
  }
  const children = n.children;
  if (!Array.isArray(children)) throw bad(`${path}.children`, 'an array of nodes', children);
  for (let i = children.length - 1; i >= 0; i--) stack.push([children[i], `${path}.children[${i}]`]);
}

function checkAgent(a: unknown, path: string): void {
  if (a === null || typeof a !== 'object') throw bad(path, 'an object { id, tools, sections, listeners }', a);
  const r = a as Record<string, unknown>;
  if (typeof r.id !== 'string') throw bad(`${path}.id`, 'a string', r.id);
  if (r.kind !== undefined && typeof r.kind !== 'string') throw bad(`${path}.kind`, 'a string or absent', r.kind);
  checkStrings(r.tools, `${path}.tools`);
  checkStrings(r.sections, `${path}.sections`);
  if (typeof r.listeners !== 'number' || !Number.isSafeInteger(r.listeners) || r.listeners < 0) throw bad(`${path}.listeners`, 'an integer >= 0', r.listeners);
  if (r.lease === undefined) return;
  const l = r.lease as Record<string, unknown> | null;
  if (l === null || typeof l !== 'object') throw bad(`${path}.lease`, 'an object { owner, epoch, expiresAt }', l);
  if (typeof l.owner !== 'string') throw bad(`${path}.lease.owner`, 'a string', l.owner);
  if (typeof l.epoch !== 'number' || !Number.isSafeInteger(l.epoch)) throw bad(`${path}.lease.epoch`, 'an integer', l.epoch);
  if (typeof l.expiresAt !== 'number' || !Number.isFinite(l.expiresAt) || Math.abs(l.expiresAt) > 8.64e15) {
    throw bad(`${path}.lease.expiresAt`, 'a time in milliseconds since the epoch', l.expiresAt);
  }
}

function checkStrings(v: unknown, path: string): void {
  if (!Array.isArray(v)) throw bad(path, 'an array of strings', v);
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'string') throw bad(`${path}[${i}]`, 'a string', v[i]);
}

// ------------------------------------------------------------------ details

/** A node's details after its label, each one `name: value` (or a single word). */
function details(node: InspectNode): string[] {
  const out: string[] = [];
  if (node.disposed) out.push('disposed');
  const a = node.agent;
  if (a !== undefined) {
    if (a.kind !== undefined) out.push(`kind: ${clean(a.kind)}`);
    if (a.tools.length > 0) out.push(`tools: ${list(a.tools)}`);
    if (a.sections.length > 0) out.push(`sections: ${list(a.sections)}`);
    out.push(`listeners: ${a.listeners}`);
    const l = a.lease;
    if (l !== undefined) out.push(`lease: ${clean(l.owner)} epoch ${l.epoch} until ${new Date(l.expiresAt).toISOString()}`);
  }
  if (node.session !== undefined) out.push(`committed turn: ${node.session.committedTurn}`);
  if (node.locals.length > 0) out.push(`${node.kind === 'server' ? 'globals' : 'locals'}: ${list(node.locals)}`);
  return out;
}

function list(names: readonly string[]): string {
  return names.map(clean).join(', ');
}

/** Control characters (and the line separators) shown escaped, so one node stays one line. */
function clean(s: string): string {
  // eslint-disable-next-line no-control-regex
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
}

// ------------------------------------------------------------------ text

/** @internal The indented text tree: one line per node. */
export function formatText(root: InspectNode): string {
  const lines: string[] = [];
  // [node, the prefix of its own line, the prefix of its children's lines]
  const stack: [InspectNode, string, string][] = [[root, '', '']];
  while (stack.length > 0) {
    const [node, lead, indent] = stack.pop() as [InspectNode, string, string];
    lines.push(lead + [clean(node.label), ...details(node)].join(' · '));
    const kids = node.children;
    for (let i = kids.length - 1; i >= 0; i--) {
      const last = i === kids.length - 1;
      stack.push([kids[i], `${indent}${last ? '└─ ' : '├─ '}`, `${indent}${last ? '   ' : '│  '}`]);
    }
  }
  return lines.join('\n');
}

// ------------------------------------------------------------------ mermaid

const SHAPES: Readonly<Record<InspectNode['kind'], readonly [string, string]>> = {
  server: ['[[', ']]'],
  context: ['[', ']'],
  agent: ['([', '])'],
  session: ['(', ')'],
};

const ENTITIES: Readonly<Record<string, string>> = { '"': '#quot;', '#': '#35;', '&': '#amp;', '<': '#lt;', '>': '#gt;', '`': '#96;' };

/** A label line safe inside a quoted Mermaid label: quotes, `#`, HTML and backticks as entity codes. */
function mermaidText(s: string): string {
  return clean(s).replace(/["#&<>`]/g, (c) => ENTITIES[c] as string);
}

/** @internal The Mermaid `flowchart TD`: nodes `n0`, `n1`, … in pre-order, each followed by the edge from its parent. */
export function formatMermaid(root: InspectNode): string {
  const lines = ['flowchart TD'];
  const disposed: string[] = [];
  let next = 0;
  const stack: [InspectNode, string | undefined][] = [[root, undefined]];
  while (stack.length > 0) {
    const [node, parent] = stack.pop() as [InspectNode, string | undefined];
    const id = `n${next++}`;
    const [open, close] = SHAPES[node.kind];
    const text = [node.label, ...details(node).filter((d) => d !== 'disposed')].map(mermaidText).join('<br/>');
    lines.push(`  ${id}${open}"${node.disposed ? `${text}<br/>(disposed)` : text}"${close}`);
    if (parent !== undefined) lines.push(`  ${parent} --> ${id}`);
    if (node.disposed) disposed.push(id);
    for (let i = node.children.length - 1; i >= 0; i--) stack.push([node.children[i], id]);
  }
  if (disposed.length > 0) {
    lines.push('  classDef disposed stroke-dasharray: 5 5');
    lines.push(`  class ${disposed.join(',')} disposed`);
  }
  return lines.join('\n');
}
