export * from './naming.ts';
export * from './definition.ts';
export * from './upstream-fetch.ts';
export * from './listing.ts';
export * from './registry.ts';
export * from './mount.ts';
