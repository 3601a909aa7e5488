export { defineBridgeConfig } from './config.ts';
export type { BridgeConfig, RedisStore } from './config.ts';
export { createBridge, startBridge } from './bridge.ts';
export type { Bridge, CreateBridgeOptions, RunningBridge, StartOptions } from './bridge.ts';
export { resolveSettings } from './settings.ts';
export type { BridgeSettings, Env, ListenHost, LogLevel } from './settings.ts';
export {
  bearerTokens,
  ForbiddenError,
  httpBasic,
  jwtEcdsa,
  jwtHmac,
  localDev,
  none,
  oidc,
  UnauthenticatedError,
  withAuthChallenges,
} from '@eve-flue/compat-server';
export type {
  AuthChallenge,
  ForwardedAssertion,
  ForwardedPrincipalContext,
  HttpBasicCredentials,
  HttpBasicOptions,
  JwtEcdsaOptions,
  JwtHmacOptions,
  Logger,
  Mode,
  OidcOptions,
  Principal,
  RouteAuth,
  RouteAuthContext,
  RouteAuthPolicy,
  SessionOwnerPolicy,
  TrustedForwarders,
} from '@eve-flue/compat-server';
export { defineFlueConnection, defineFlueConnectionWithConnect, defineOpenAPIConnection } from '@eve-flue/connections';
export type {
  ConnectionSetContext,
  ConnectionSetResolver,
  CredentialContext,
  FlueConnectionDefinition,
  OpenAPIConnectionDefinition,
  ToolCallContext,
  ToolFilter,
} from '@eve-flue/connections';
export type { FlueAgent } from '@eve-flue/flue-adapter';
