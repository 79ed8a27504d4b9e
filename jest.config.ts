import { createDefaultEsmPreset, type JestConfigWithTsJest } from 'ts-jest';

const config: JestConfigWithTsJest = {
  ...createDefaultEsmPreset({ tsconfig: 'tsconfig.json' }),
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The examples import the package by its name (tsconfig.json "paths"): tests load them on the sources.
    '^polestar-di$': '<rootDir>/src/index.ts',
    '^polestar-di/(.*)$': '<rootDir>/src/$1',
  },
  testTimeout: 60_000,
};
export default config;
