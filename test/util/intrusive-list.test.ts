/**
 * The intrusive list: order, size and links after pushes, unshifts and removals, checked
 * against an array model over random operation sequences, plus the walk that survives a
 * removal of the node it stands on.
 */
import fc from 'fast-check';
import { IntrusiveList, type ListNode } from '../../src/util/intrusive-list.js';

interface Item extends ListNode<Item> {
  readonly id: number;
}

const item = (id: number): Item => ({ id, prev: undefined, next: undefined });

function forward(list: IntrusiveList<Item>): number[] {
  const out: number[] = [];
  for (let n = list.head; n !== undefined; n = n.next) out.push(n.id);
  return out;
}

function backward(list: IntrusiveList<Item>): number[] {
  const out: number[] = [];
  for (let n = list.tail; n !== undefined; n = n.prev) out.push(n.id);
  return out;
}

test('push appends, unshift prepends, remove unlinks from the head, the middle and the tail', () => {
  const list = new IntrusiveList<Item>();
  expect(list.head).toBeUndefined();
  expect(list.tail).toBeUndefined();
  const [a, b, c, d] = [item(1), item(2), item(3), item(4)];
  list.push(b);
  list.push(c);
  list.unshift(a);
  list.push(d);
  expect(forward(list)).toEqual([1, 2, 3, 4]);
  expect(backward(list)).toEqual([4, 3, 2, 1]);
  expect(list.size).toBe(4);
  list.remove(b);
  expect(forward(list)).toEqual([1, 3, 4]);
  expect(b.prev).toBeUndefined();
  expect(b.next).toBeUndefined();
  list.remove(a);
  list.remove(d);
  expect(forward(list)).toEqual([3]);
  expect(list.head).toBe(c);
  expect(list.tail).toBe(c);
  list.remove(c);
  expect(list.size).toBe(0);
  expect(list.head).toBeUndefined();
  expect(list.tail).toBeUndefined();
});

test('a node removed with unlinkKeepingNext keeps its successor, so a walk standing on it goes on', () => {
  const list = new IntrusiveList<Item>();
  const items = [1, 2, 3, 4].map(item);
  for (const i of items) list.push(i);
  const seen: number[] = [];
  for (let n = list.head; n !== undefined; n = n.next) {
    seen.push(n.id);
    if (n.id === 2) {
      list.unlinkKeepingNext(n);
      list.unlinkKeepingNext(items[2] as Item);
      expect(n.prev).toBeUndefined();
    }
  }
  // 3 was removed after 2 kept its link to it: a walk reaches it once more, then 4
  expect(seen).toEqual([1, 2, 3, 4]);
  expect(forward(list)).toEqual([1, 4]);
  expect(backward(list)).toEqual([4, 1]);
  expect(list.size).toBe(2);
});

type Op = { kind: 'push' } | { kind: 'unshift' } | { kind: 'remove' | 'keep'; at: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constantFrom<Op>({ kind: 'push' }, { kind: 'unshift' }),
  fc.record({ kind: fc.constantFrom<'remove' | 'keep'>('remove', 'keep'), at: fc.nat() }),
);

test('any sequence of operations leaves the list in the order of an array model, linked both ways', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
      const list = new IntrusiveList<Item>();
      const model: Item[] = [];
      let id = 0;
      for (const o of ops) {
        if (o.kind === 'push') {
          const i = item(++id);
          list.push(i);
          model.push(i);
        } else if (o.kind === 'unshift') {
          const i = item(++id);
          list.unshift(i);
          model.unshift(i);
        } else if (model.length > 0) {
          const [i] = model.splice(o.at % model.length, 1) as [Item];
          if (o.kind === 'remove') list.remove(i);
          else list.unlinkKeepingNext(i);
          expect(i.prev).toBeUndefined();
        }
      }
      const ids = model.map((i) => i.id);
      expect(forward(list)).toEqual(ids);
      expect(backward(list)).toEqual([...ids].reverse());
      expect(list.size).toBe(model.length);
      expect(list.head).toBe(model[0]);
      expect(list.tail).toBe(model[model.length - 1]);
    }),
  );
});
