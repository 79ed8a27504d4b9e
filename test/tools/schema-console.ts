/** Spies on every console method a validator could print with; `printed()` lists what was printed. */
import { jest } from '@jest/globals';

const METHODS = ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const;

export function spyConsole(): { printed(): unknown[][]; restore(): void } {
  const spies = METHODS.map((m) => jest.spyOn(console, m).mockImplementation(() => undefined));
  return {
    printed: () => spies.flatMap((s) => s.mock.calls as unknown[][]),
    restore: () => spies.forEach((s) => s.mockRestore()),
  };
}
