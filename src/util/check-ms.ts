/**
 * @internal Checks a duration option in milliseconds: a finite number from 0 to 2^31 - 1
 * (a timer's range). A `TypeError` naming `where` otherwise.
 */
import { describeValue } from './describe-value.js';

/** @internal See the module's comment; returns the value. */
export function checkMs(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 2 ** 31 - 1) {
    throw new TypeError(`${where} must be a finite number of milliseconds from 0 to 2^31 - 1, got ${describeValue(value)}.`);
  }
  return value;
}
