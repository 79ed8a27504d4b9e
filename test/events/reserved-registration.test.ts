/**
 * The reserved event prefixes are registered by the features themselves when their modules
 * load (tools, prompts, agents, sessions). Loading the package's root registers all of them,
 * in the order the refusal names them; a registration with a new prefix reserves it the same
 * way; malformed registrations are refused.
 */
import { Events, Server, ToolsPlugin } from '../../src/index.js';
import { reserveEventNames, reservedNameError } from '../../src/events/reserved.js';

const ALL_PREFIXES = 'tools/, tool/, prompt/, prompts/, agent/, agents/, session/, sessions/';

describe('reserved prefixes registered by the features', () => {
  test('the root entry reserves every feature prefix, named in the refusal in the same order as ever', async () => {
    const server = new Server();
    server.addPlugins(new ToolsPlugin());
    await server.finish();
    const events = server.createContext().get(Events);
    const free = (name: string) => name;
    expect(() => events.on(free('tool/pre-execute'), () => undefined)).toThrow(
      new TypeError(
        `unknown event "tool/pre-execute"; did you mean "tools/pre-execute"? (Events.on("tool/pre-execute"): the prefixes ${ALL_PREFIXES} are reserved for polestar's ` +
          `built-in events, spelled exactly; name your own events outside them and type them by adding them to EventMap.)`,
      ),
    );
    await expect(events.emit(undefined, free('Sessions:Disposed'))).rejects.toThrow(
      `unknown event "Sessions:Disposed"; did you mean "session/disposed"? (Events.emit(scope, "Sessions:Disposed"): the prefixes ${ALL_PREFIXES} are reserved`,
    );
    // a name equally far from two built-ins suggests the one reserved first
    expect(reservedNameError('tools/x', 'here')?.message).toContain('did you mean "tools/execute"?');
    await server.dispose();
  });

  test('a new registration reserves its prefixes (any first letter) and its names, and registering again changes nothing', () => {
    expect(reservedNameError('widget/built', 'here')).toBeUndefined();
    reserveEventNames(['widget/', 'widgets/'], ['widget/built', 'widget/dropped']);
    reserveEventNames(['widget/', 'widgets/'], ['widget/built', 'widget/dropped']);
    expect(reservedNameError('widget/built', 'here')).toBeUndefined();
    expect(reservedNameError('widget/dropped', 'here')).toBeUndefined();
    const refused = reservedNameError('Widgets.Build', 'here');
    expect(refused).toBeInstanceOf(TypeError);
    expect(refused?.message).toBe(
      `unknown event "Widgets.Build"; did you mean "widget/built"? (here: the prefixes ${ALL_PREFIXES}, widget/, widgets/ are reserved for polestar's ` +
        `built-in events, spelled exactly; name your own events outside them and type them by adding them to EventMap.)`,
    );
    expect(reservedNameError('widgetry/x', 'here')).toBeUndefined();
    expect(reservedNameError('widget', 'here')).toBeUndefined();
  });

  test('a malformed prefix, or a name under none of the prefixes, is refused', () => {
    expect(() => reserveEventNames(['Gadget/'], ['Gadget/x'])).toThrow(/the prefix "Gadget\/" is malformed; pass a lower-case head and a slash/);
    expect(() => reserveEventNames(['gadget'], [])).toThrow(/the prefix "gadget" is malformed/);
    expect(() => reserveEventNames(['gadget/'], ['gizmo/x'])).toThrow(/the event "gizmo\/x" is under none of the prefixes gadget\//);
    expect(() => reserveEventNames(['gadget/'], ['gadget/'])).toThrow(/the event "gadget\/" is under none of the prefixes/);
    // nothing was reserved by the refused calls
    expect(reservedNameError('gadget/x', 'here')).toBeUndefined();
  });
});
