export { SessionTakenOverError, StoreUnavailableError, storeCall } from '@eve-flue/session-contract';
