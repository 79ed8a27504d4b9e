import { Server, token, ParamError } from '../../src/index.js';

class AppConfig { constructor(public agentName = 'a') {} }
class Scratchpad { notes: string[] = []; }
const API_KEY = token<string>('API_KEY');

test('smoke', async () => {
  const server = new Server();
  server.insertGlobal(new AppConfig('x'));
  server.insertGlobal(API_KEY, 'secret');
  await server.finish();
  const root = server.createContext();
  const turn = root.child().child();
  turn.insert(new Scratchpad());
  expect(turn.get(AppConfig).agentName).toBe('x');
  expect(turn.get(API_KEY)).toBe('secret');
  expect(() => turn.child().getMut(Scratchpad)).toThrow(ParamError);
  await server.dispose();
  expect(turn.isDisposed).toBe(true);
});
