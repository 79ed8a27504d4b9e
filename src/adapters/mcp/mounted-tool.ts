/** One tool of an MCP mount: its registration and its calls in flight, as work on the mount's lifetime. */
import type { InFlight } from '../../lifetime/work.js';

/**
 * @internal One registered tool of a mount, tracked on the mount's lifetime as in-flight work: the
 * start of the mount's close unregisters it (aborting its calls), and the close awaits
 * its calls before it closes the source.
 */
export class MountedTool implements InFlight {
  /** For messages: `MCP tool "read_file"`. */
  readonly label: string;
  /** Aborts the tool's in-flight calls when it is unregistered. */
  readonly calls = new AbortController();
  /** The tool's calls in flight (each one's settling, never rejecting). */
  readonly running = new Set<Promise<unknown>>();
  /** Undoes the registration (set once registered). */
  off: () => void = noop;
  /** Stops tracking the tool on the mount's lifetime (set once tracked). */
  untrack: () => void = noop;

  /**
   * @param name - the registered name (`prefix + mcpName`).
   * @param mcpName - the tool's name on the server.
   * @param key - the identity of its listed definition: a change re-registers it.
   * @param unmount - unregisters it when the mount's close starts.
   */
  constructor(
    readonly name: string,
    readonly mcpName: string,
    readonly key: string | undefined,
    private readonly unmount: (tool: MountedTool) => void,
  ) {
    this.label = `MCP tool "${mcpName}"`;
  }

  /** No call of the tool is running: the mount's close has nothing of it to wait for. */
  get idle(): boolean {
    return this.running.size === 0;
  }

  /** Settles when the calls running now have settled. */
  get settled(): Promise<unknown> {
    return Promise.all(this.running);
  }

  /** The mount's close started: unregisters the tool, aborting its calls. */
  abort(): void {
    this.unmount(this);
  }
}

function noop(): void {
  // intentionally empty
}
