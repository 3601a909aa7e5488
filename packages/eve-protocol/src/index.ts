export * from './events.ts';
export * from './envelope.ts';
export * from './ndjson.ts';
export * from './routes.ts';
export * from './errors.ts';
export * from './responses.ts';
export * from './loopback.ts';
export * from './json.ts';
