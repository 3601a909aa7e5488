export { defineBridgeConfig } from './config.ts';
export type { BridgeConfig, RedisStore } from './config.ts';
export { createBridge, startBridge } from './bridge.ts';
export type { Bridge, CreateBridgeOptions, RunningBridge, StartOptions } from './bridge.ts';
export { bearerTokens } from '@eve-flue/compat-server';
export type { Logger, Mode, Principal, RouteAuth } from '@eve-flue/compat-server';
export { defineFlueConnection, defineFlueConnectionWithConnect } from '@eve-flue/connections';
export type { ConnectionSetContext, ConnectionSetResolver, CredentialContext, FlueConnectionDefinition } from '@eve-flue/connections';
export type { FlueAgent } from '@eve-flue/flue-adapter';
