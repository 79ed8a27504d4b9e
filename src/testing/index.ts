/**
 * polestar-di/testing: helpers for unit-testing systems and agents (a finished test
 * server with fakes, one system run, a live test agent, a fake `Agent`) and for checking
 * that contexts, scopes and scoped registrations are disposed.
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export { createTestServer } from './create-test-server.js';
export type { TestServerOptions, TestGlobal, TestLocal } from './create-test-server.js';
export type { CheckedPair, CheckedPairs, CheckedFactoryPair, CheckedFactoryPairs } from './checked-pairs.js';
export { runSystem } from './run-system.js';
export type { RunSystemOptions, RunSystemResult } from './run-system.js';
export { assertNoLeaks, LeakError } from './assert-no-leaks.js';
export { runSessionStoreConformance, SESSION_STORE_CONFORMANCE_CHECKS } from './conformance/run.js';
export type { ConformanceTestFn, MakeSessionStore, SessionStoreConformanceOptions, SessionStoreConformanceReport } from './conformance/types.js';
export { createTestAgent } from './create-test-agent.js';
export type { TestAgentOptions, TestAgent } from './create-test-agent.js';
export { fakeAgent } from './fake-agent.js';
export type { FakeAgentOptions } from './fake-agent.js';
