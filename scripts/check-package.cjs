// Loads the built package through its "exports" from CommonJS (Node >= 20.19 can
// require() ES modules), as a CommonJS consumer would. Run after `npm run build`.
const assert = require('node:assert/strict');
const polestar = require('polestar-di');
const testing = require('polestar-di/testing');

for (const name of ['Server', 'SystemContext', 'token', 'Res', 'ResMut', 'Out', 'system', 'createScope', 'scopeOf', 'Tools', 'Prompts', 'Events', 'Agents']) {
  assert.ok(name in polestar, `polestar-di exports ${name}`);
}
for (const name of ['createTestServer', 'runSystem', 'assertNoLeaks']) {
  assert.ok(name in testing, `polestar-di/testing exports ${name}`);
}
assert.ok(typeof Reflect.getMetadata === 'function', 'importing polestar-di loads reflect-metadata');

(async () => {
  const KEY = polestar.token('KEY');
  const server = await testing.createTestServer({ globals: [[KEY, 'secret']] });
  const ctx = server.createContext().child();
  assert.equal(ctx.get(KEY), 'secret');
  await server.dispose();
  testing.assertNoLeaks(server);
  console.log('package check: require("polestar-di") and require("polestar-di/testing") work from CommonJS');
})().catch((err) => {
  console.error(err);
  process.exit(1);
});
