export { FlueRuntime } from './runtime.ts';
export type { FlueAgent, FlueRuntimeOptions } from './runtime.ts';
export { createScriptedModel, SCRIPTED_MODEL } from './scripted-model.ts';
export { TurnError } from '@eve-flue/session-contract';
export { leasedConversations } from './leased-conversations.ts';
export type { GenerationStore } from './instance-directory.ts';
export type { BridgedConnection, CallerConnections } from './connection-tools.ts';
export { flueStore } from './flue-store.ts';
export { checkedTools } from './own-tools.ts';
