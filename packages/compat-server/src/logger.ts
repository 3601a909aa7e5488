export { silentLogger, type Logger } from '@eve-flue/session-contract';
