export { redisFlueDb, type RedisFlueDbOptions } from './adapter.ts';
