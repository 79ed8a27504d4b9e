// The bridge to inversify: ctx.resolve(Class) builds classes through a context's container.
// (The behaviour is reached through SystemContext.resolve / resolveAsync.) inversify's
// class decorators are re-exported so applications use the same inversify as polestar.
export { inject, injectable } from './decorators.js';
