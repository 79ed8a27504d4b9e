/**
 * A model's tool-call arguments as text (OpenAI) to polestar arguments and back. Text that
 * is not valid lossless JSON is kept as the raw string, so that `Tools.execute` answers
 * `INVALID_ARGS` and a converter writes it back verbatim.
 */
import { snapshotJson, type JsonValue } from '../../util/lossless-json.js';

const EMPTY: JsonValue = Object.freeze({});

/**
 * @internal The arguments a model's text stands for: the parsed value when the text is
 * valid lossless JSON and not itself a JSON string (`{}` for blank text), otherwise the raw text (a string).
 * Never throws.
 */
export function parseArguments(text: unknown): JsonValue {
  if (typeof text !== 'string') return typeof text === 'undefined' ? '' : safeJson(text);
  // Some models send "" for a tool without parameters: it stands for {} (as the AI SDK reads it).
  if (text.trim() === '') return EMPTY;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  // A JSON string would be indistinguishable from raw text: keep the raw text.
  if (typeof parsed === 'string') return text;
  try {
    return snapshotJson(parsed, 'tool arguments', 'arguments');
  } catch {
    return text; // e.g. -0, 1e400 or nesting deeper than polestar keeps
  }
}

function safeJson(v: unknown): JsonValue {
  try {
    return snapshotJson(v, 'tool arguments', 'arguments');
  } catch {
    return '';
  }
}

/** @internal The text to send for polestar arguments: a string verbatim, anything else as JSON. */
export function argumentsText(args: JsonValue): string {
  return typeof args === 'string' ? args : JSON.stringify(args);
}

/**
 * @internal The text to write for `args`, preferring the model's own `raw` text when it
 * still stands for the same arguments (so a round trip keeps whitespace and key spelling).
 */
export function argumentsTextPreferring(args: JsonValue, raw: unknown): string {
  if (typeof raw === 'string' && typeof args !== 'string') {
    const again = parseArguments(raw);
    if (typeof again !== 'string' && JSON.stringify(again) === JSON.stringify(args)) return raw;
  }
  return argumentsText(args);
}

/** @internal The raw text to keep next to parsed arguments, or `undefined` when writing them back gives the same text. */
export function rawArgumentsToKeep(text: string, args: JsonValue): string | undefined {
  return argumentsText(args) === text ? undefined : text;
}
