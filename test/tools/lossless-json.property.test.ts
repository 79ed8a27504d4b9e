/**
 * `snapshotJson` refusals name the exact path of the offending value: the path text is
 * checked against one built independently while planting a bad value at a random place
 * of a random JSON value (objects give `.key`, arrays `[i]`).
 */
import fc from 'fast-check';
import { NotLosslessJsonError, snapshotJson } from '../../src/util/lossless-json.js';

type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };

const json = fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.parse(JSON.stringify(v)) as Plain);
const bad = fc.constantFrom<[unknown, RegExp]>(
  [undefined, /is undefined/],
  [Number.NaN, /is NaN/],
  [() => 1, /is a function/],
  [new Map(), /is a Map instance/],
  [10n, /is a bigint/],
);

/** Plants `value` at the place `choices` picks (walking down while there is a child) and returns its path text. */
function plant(root: Plain, choices: number[], value: unknown): { value: unknown; path: string } {
  if (root === null || typeof root !== 'object') return { value, path: '' };
  let node: Plain[] | { [k: string]: Plain } = root;
  let path = '';
  for (const c of choices) {
    const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    if (keys.length === 0) break;
    const k = keys[c % keys.length] as string | number;
    const child: Plain = (node as Record<string | number, Plain>)[k] as Plain;
    path += typeof k === 'number' ? `[${k}]` : `.${k}`;
    if (child === null || typeof child !== 'object' || c % 3 === 0) {
      (node as Record<string | number, unknown>)[k] = value;
      return { value: root, path };
    }
    node = child;
  }
  const keys = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
  if (keys.length === 0) {
    if (Array.isArray(node)) node.push(value as Plain);
    else (node as Record<string, unknown>).planted = value;
    return { value: root, path: path + (Array.isArray(node) ? '[0]' : '.planted') };
  }
  const k = keys[0] as string | number;
  (node as Record<string | number, unknown>)[k] = value;
  return { value: root, path: path + (typeof k === 'number' ? `[${k}]` : `.${k}`) };
}

test('a refusal names the path of the bad value, wherever it is', () => {
  fc.assert(
    fc.property(json, fc.array(fc.nat(), { maxLength: 6 }), bad, (v, choices, [value, reason]) => {
      const planted = plant(v, choices, value);
      let err: unknown;
      try {
        snapshotJson(planted.value, 'x', 'root');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(NotLosslessJsonError);
      expect((err as NotLosslessJsonError).path).toBe(`root${planted.path}`);
      expect((err as NotLosslessJsonError).reason).toMatch(reason);
    }),
    { numRuns: 500 },
  );
});
