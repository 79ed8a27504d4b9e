import 'reflect-metadata';
import * as inversify from 'inversify';
import { Server, inject, injectable, token } from '../../src/index.js';

test('polestar-di re-exports the very injectable and inject of the inversify it is built on', () => {
  expect(injectable).toBe(inversify.injectable);
  expect(inject).toBe(inversify.inject);
});

test('a class decorated with the re-exported decorators resolves through a context and in a plain inversify Container', async () => {
  const ApiKey = token<string>('ApiKey');

  @injectable()
  class Client {
    constructor(@inject(ApiKey) readonly key: string) {}
  }

  @injectable()
  class Service {
    constructor(@inject(Client) readonly client: Client) {}
  }

  const server = new Server();
  server.insertGlobal(ApiKey, 'secret');
  await server.finish();
  const ctx = server.createContext().child();
  expect(ctx.resolve(Service).client.key).toBe('secret');
  const container = new inversify.Container();
  container.bind(ApiKey).toConstantValue('other');
  container.bind(Client).toSelf();
  expect(container.get(Client).key).toBe('other');
  await server.dispose();
});
