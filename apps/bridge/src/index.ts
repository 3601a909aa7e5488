export { defineBridgeConfig } from './config.ts';
export type { BridgeConfig } from './config.ts';
export { startBridge } from './bridge.ts';
export type { RunningBridge } from './bridge.ts';
export { startDemoStack } from './demo/index.ts';
export type { DemoStack, DemoStackOptions } from './demo/index.ts';
export { bearerTokens } from '@eve-flue/compat-server';
export { defineFlueConnection } from '@eve-flue/connections';
