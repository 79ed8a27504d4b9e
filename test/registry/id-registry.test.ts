import { IdRegistry, type IdEntry } from '../../src/registry/id-registry.js';

class Entry implements IdEntry {
  ready = false;
  isDisposed = false;
  constructor(readonly id: string) {}
}

class Registry extends IdRegistry<Entry> {
  protected isPublished(e: Entry): boolean {
    return e.ready && !e.isDisposed;
  }
  protected describe(e: Entry): string {
    return `entry "${e.id}"${e.ready ? '' : ' (reserved)'}`;
  }
}

test('a reserved entry holds its id; get and list show it only once the kind publishes it', () => {
  const r = new Registry();
  const a = new Entry('a');
  r.reserve(a);
  expect(r.holder('a')).toBe(a);
  expect(r.liveHolder('a')).toBe(a);
  expect(r.get('a')).toBeUndefined();
  expect(r.list()).toEqual([]);
  a.ready = true;
  expect(r.get('a')).toBe(a);
  expect(r.list()).toEqual([a]);
  expect(r.get('b')).toBeUndefined();
  expect(r.holder('b')).toBeUndefined();
});

test('a disposed holder no longer blocks its id, and its successor takes the newest place', () => {
  const r = new Registry();
  const a = new Entry('a');
  const b = new Entry('b');
  for (const e of [a, b]) {
    r.reserve(e);
    e.ready = true;
  }
  a.isDisposed = true; // its disposal started, it has not left yet
  expect(r.liveHolder('a')).toBeUndefined();
  expect(r.holder('a')).toBe(a);
  expect(r.get('a')).toBeUndefined();
  const a2 = new Entry('a');
  r.reserve(a2);
  a2.ready = true;
  expect(r.list()).toEqual([b, a2]);
  r.leave(a); // the predecessor's late leave keeps the successor's reservation
  expect(r.get('a')).toBe(a2);
  r.leave(a2);
  expect(r.holder('a')).toBeUndefined();
  expect([...r.values()]).toEqual([b]);
});

test('leaks() describes every entry still holding its id, in reservation order', () => {
  const r = new Registry();
  const a = new Entry('a');
  const b = new Entry('b');
  r.reserve(a);
  r.reserve(b);
  b.ready = true;
  expect(r.leaks()).toEqual(['entry "a" (reserved)', 'entry "b"']);
  r.leave(a);
  r.leave(b);
  expect(r.leaks()).toEqual([]);
});
