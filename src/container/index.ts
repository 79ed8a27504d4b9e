// The bridge to inversify: ctx.resolve(Class) builds classes through a context's container.
// (The behaviour is reached through SystemContext.resolve / resolveAsync; nothing else is public.)
export {};
