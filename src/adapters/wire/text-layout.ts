/**
 * Provider content (a string, `null`, absent, or an array of parts) to polestar's string
 * `content` and back. The text parts are joined with a newline; the array is kept as a
 * *layout*: the parts in order, each text part with its `text` replaced by its length (a
 * number, which no real text part has). Writing back splits the content at those lengths
 * when it still fits (same total length, newlines where the joins were), so an unedited
 * message comes back exactly and an edited one keeps its other parts with the new text.
 */
import { describeValue } from '../../util/describe-value.js';
import { isObj, type Obj } from './provider-meta.js';

/** @internal The separator text parts are joined with. */
export const TEXT_JOIN = '\n';

/** @internal The residual value marking content that was absent (not `null`, not `''`). */
export const ABSENT = Object.freeze({ absent: true });

/** @internal Whether `p` is a provider text part. */
export function isTextPart(p: unknown, textTypes: readonly string[]): p is Obj & { text: string } {
  return isObj(p) && textTypes.includes(p.type as string) && typeof p.text === 'string';
}

/** @internal Whether `p` is a text part of a layout (its `text` replaced by a length). */
export function isPlaceholder(p: unknown, textTypes: readonly string[]): p is Obj & { text: number } {
  return isObj(p) && textTypes.includes(p.type as string) && typeof p.text === 'number';
}

/**
 * @internal Reads provider content into polestar text, recording in `residual[key]` what
 * the string can not say: `null`, absence, or the layout of an array.
 *
 * @throws TypeError for content that is none of those.
 */
export function decodeContent(value: unknown, textTypes: readonly string[], residual: Obj, key: string, where: string): string {
  if (typeof value === 'string') return value;
  if (value === undefined) {
    residual[key] = ABSENT;
    return '';
  }
  if (value === null) {
    residual[key] = null;
    return '';
  }
  if (!Array.isArray(value)) throw new TypeError(`${where}: ${key} must be a string or an array of parts, got ${describeValue(value)}.`);
  const texts: string[] = [];
  const layout = (value as unknown[]).map((p) => {
    if (!isTextPart(p, textTypes)) return p;
    texts.push(p.text);
    return { ...p, text: p.text.length };
  });
  residual[key] = layout;
  return texts.join(TEXT_JOIN);
}

/** @internal Whether the residual says the content was absent. */
export function wasAbsent(residual: Obj, key: string): boolean {
  const r = residual[key];
  return isObj(r) && r.absent === true;
}

/**
 * @internal Writes polestar text back as the provider content recorded in
 * `residual[key]`: absent (returns `undefined`) or `null` while the text is still empty, the
 * layout's parts with the text split back in, or the plain string.
 */
export function encodeContent(
  text: string,
  residual: Obj,
  key: string,
  textTypes: readonly string[],
  makeTextPart: (text: string) => Obj,
): unknown {
  const r = residual[key];
  if (text === '' && wasAbsent(residual, key)) return undefined;
  if (text === '' && r === null) return null;
  if (!Array.isArray(r)) return text;
  const layout = r as unknown[];
  const lengths = layout.filter((p) => isPlaceholder(p, textTypes)).map((p) => (p as { text: number }).text);
  const pieces = splitJoined(text, lengths);
  if (pieces !== undefined) {
    let i = 0;
    return layout.map((p) => (isPlaceholder(p, textTypes) ? { ...p, text: pieces[i++] } : p));
  }
  // The text was edited: keep the other parts in place, the text in the first text part.
  let placed = false;
  const out: unknown[] = [];
  for (const p of layout) {
    if (!isPlaceholder(p, textTypes)) out.push(p);
    else if (!placed) {
      placed = true;
      out.push({ ...p, text });
    }
  }
  if (!placed && text !== '') out.push(makeTextPart(text));
  return out;
}

/**
 * @internal Splits `text` back into pieces of the given lengths joined by
 * {@link TEXT_JOIN}, or `undefined` when it does not fit them.
 */
export function splitJoined(text: string, lengths: readonly number[]): string[] | undefined {
  if (lengths.length === 0) return text === '' ? [] : undefined;
  if (lengths.some((n) => !Number.isInteger(n) || n < 0)) return undefined;
  const total = lengths.reduce((a, b) => a + b, 0) + (lengths.length - 1) * TEXT_JOIN.length;
  if (total !== text.length) return undefined;
  const out: string[] = [];
  let at = 0;
  for (const [i, n] of lengths.entries()) {
    out.push(text.slice(at, at + n));
    at += n;
    if (i < lengths.length - 1) {
      if (text.slice(at, at + TEXT_JOIN.length) !== TEXT_JOIN) return undefined;
      at += TEXT_JOIN.length;
    }
  }
  return out;
}
