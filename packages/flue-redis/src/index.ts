export { redisFlueDb, type RedisFlueConnections, type RedisFlueDbOptions } from './adapter.ts';
