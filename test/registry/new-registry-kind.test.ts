/**
 * A new registry kind, written with the registry kit and the public Server/plugin API
 * only: `Skills`. A skill has an id unique on its server (an id registry: reserved while it
 * prepares, published once ready), is visible to the scope that registered it and, when
 * registered globally, to every scope (a scoped list), is owned by the context that
 * registered it, and shows up in `assertNoLeaks` while it lives.
 */
import { ContextView, RegistrationError, Server, createScope, type Plugin, type SystemContext } from '../../src/index.js';
import { assertNoLeaks, LeakError } from '../../src/testing/index.js';
import { IdRegistry, ScopedList, definePlugin, explicitScope, type IdEntry } from '../../src/registry/index.js';

// ---- the kind: about 70 lines ----------------------------------------------------------

interface SkillDefinition {
  readonly id: string;
  readonly text: string;
  /** Awaited while the skill is unpublished (its id reserved). */
  readonly prepare?: () => Promise<void>;
}

class Skill implements IdEntry {
  published = false;
  isDisposed = false;
  constructor(
    readonly id: string,
    readonly text: string,
  ) {}
}

class SkillRegistry extends IdRegistry<Skill> {
  readonly byScope = new ScopedList<Skill>('skill');
  protected isPublished(s: Skill): boolean {
    return s.published && !s.isDisposed;
  }
  protected describe(s: Skill): string {
    return `skill "${s.id}"${s.published ? '' : ' (preparing)'}`;
  }
}

class Skills extends ContextView<SkillRegistry> {
  /** Registers a skill in this view's scope, owned by its context; resolves to an idempotent disposer. */
  async add(def: SkillDefinition): Promise<() => void> {
    const ctx: SystemContext = this.context;
    if (this.registry.liveHolder(def.id) !== undefined) {
      throw new RegistrationError(`Skills.add(): skill "${def.id}" is already registered; dispose it first or choose another id.`);
    }
    const skill = new Skill(def.id, def.text);
    const retire = (): void => {
      skill.isDisposed = true;
      this.registry.leave(skill);
    };
    const off = ctx.onDispose(retire); // a disposed owner refuses here, before anything is held
    this.registry.reserve(skill);
    const unlist = this.registry.byScope.add(ctx, this.scope, skill);
    const dispose = (): void => {
      off();
      unlist();
      retire();
    };
    try {
      await def.prepare?.();
    } catch (err) {
      dispose();
      throw err;
    }
    if (!skill.isDisposed) skill.published = true;
    return dispose;
  }

  /** The published skill of `id`, from any scope of the server. */
  get(id: string): Skill | undefined {
    return this.registry.get(id);
  }

  /** The published skills `scope` sees (omitted: this view's scope): the global ones, then its own. */
  visible(scope?: object): string[] {
    const s = explicitScope(this.context, scope, 'Skills.visible(scope)', "pass a live scope key, or omit scope to read the view's own");
    const lists = [this.registry.byScope.global, s === undefined ? undefined : this.registry.byScope.of(s)];
    return lists.flatMap((l) => l ?? []).filter((k) => k.published && !k.isDisposed).map((k) => k.id);
  }
}

const skills = definePlugin<SkillRegistry, Skills>({
  plugin: 'SkillsPlugin',
  token: Skills,
  view: (registry) => (ctx) => new Skills(registry, ctx),
  leaks: (registry) => [...registry.leaks(), ...registry.byScope.leaks()],
  installedBy: 'server.addPlugins(new SkillsPlugin())',
});

class SkillsPlugin implements Plugin {
  readonly id = 'skills';
  build(server: Server): void {
    skills.install(server, () => new SkillRegistry());
  }
}

// ---- the kind at work ------------------------------------------------------------------

async function skillServer() {
  const server = new Server().addPlugins(new SkillsPlugin());
  await server.finish();
  return { server, app: server.createContext() };
}

test('a skill is scoped to the context that registered it; ids are unique on the server', async () => {
  const { server, app } = await skillServer();
  await app.get(Skills).add({ id: 'summarize', text: 'Summarizes a text.' });
  const researcher = createScope(app, { id: 'researcher' });
  let release!: () => void;
  const ready = new Promise<void>((resolve) => (release = resolve));
  const adding = researcher.ctx.get(Skills).add({ id: 'search', text: 'Searches the web.', prepare: () => ready });

  expect(app.get(Skills).get('search')).toBeUndefined(); // reserved, not published yet
  await expect(app.get(Skills).add({ id: 'search', text: 'another' })).rejects.toThrow(/skill "search" is already registered/);
  release();
  await adding;

  expect(app.get(Skills).get('search')?.text).toBe('Searches the web.');
  expect(researcher.ctx.get(Skills).visible()).toEqual(['summarize', 'search']);
  expect(app.get(Skills).visible()).toEqual(['summarize']); // the global layer only
  expect(app.get(Skills).visible(researcher.key)).toEqual(['summarize', 'search']); // a live key may be read
  expect(() => app.get(Skills).visible({ id: 'forged' })).toThrow(/is neither this view's own scope nor a live scope key/);
  expect(() => app.get(Skills).visible(researcher.ctx)).toThrow(/for a context pass scopeOf\(ctx\)/);

  await researcher.dispose(); // the owner's disposal takes its skill with it and frees the id
  expect(app.get(Skills).get('search')).toBeUndefined();
  expect(() => app.get(Skills).visible(researcher.key)).toThrow(TypeError);
  await app.get(Skills).add({ id: 'search', text: 'Searches the intranet.' });
  expect(app.get(Skills).visible()).toEqual(['summarize', 'search']);
  await server.dispose();
});

test('a disposer, a failed prepare and a disposed owner leave nothing behind; the leak probe reports what lives', async () => {
  const { server, app } = await skillServer();
  const scope = createScope(app, { id: 'writer' });
  const undo = await scope.ctx.get(Skills).add({ id: 'draft', text: 'Drafts.' });
  await expect(scope.ctx.get(Skills).add({ id: 'fail', text: 'x', prepare: () => Promise.reject(new Error('no model')) })).rejects.toThrow('no model');

  let leaks: readonly string[] = [];
  try {
    assertNoLeaks(server);
  } catch (err) {
    expect(err).toBeInstanceOf(LeakError);
    leaks = (err as LeakError).leaks;
  }
  expect(leaks.filter((l) => l.includes('skill'))).toEqual(['skill "draft"', 'skill of scope writer']);

  undo();
  undo(); // idempotent
  expect(app.get(Skills).visible(scope.key)).toEqual([]);
  await scope.ctx.get(Skills).add({ id: 'draft', text: 'Drafts again.' });
  const view = app.get(Skills);
  await scope.dispose();
  await app.dispose();
  assertNoLeaks(server);
  await expect(view.add({ id: 'late', text: 'x' })).rejects.toThrow(/disposed/);
  assertNoLeaks(server);
  await server.dispose();
});

test('the plugin installs once per server and names itself when it is missing', async () => {
  const bare = new Server();
  await bare.finish();
  expect(() => bare.createContext().get(Skills)).toThrow(/it is installed by SkillsPlugin: call server\.addPlugins\(new SkillsPlugin\(\)\) before server\.finish\(\)/);
  await bare.dispose();

  const twice = new Server().addPlugins(new SkillsPlugin(), { id: 'skills-again', build: (s: Server) => new SkillsPlugin().build(s) });
  await expect(twice.finish()).rejects.toThrow(/SkillsPlugin: a global of token Skills already exists; add SkillsPlugin once/);
  await twice.dispose();
});
