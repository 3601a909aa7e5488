import type { RequestHandler } from 'express';
import type { Logger, RedisConnections, ServerObserver } from '@eve-flue/compat-server';
import { accessLog } from './access-log.ts';
import { BridgeMetrics, serveMetrics } from './metrics.ts';
import { Readiness, type StoreProbe } from './readiness.ts';

export interface OpsOptions {
  logger: Logger;
  /** The instance's Redis connections, when there are some: ready only while all of them are up. */
  redis?: Pick<RedisConnections, 'check'>;
  /** Serve `/metrics` on this loopback port (0: any free one); no metrics listener when absent. */
  metricsPort?: number;
}

/** What an operator sees of an instance: the access log, metrics, and readiness. */
export interface Ops {
  accessLog: RequestHandler;
  metrics: BridgeMetrics;
  readiness: Readiness;
  observer: ServerObserver;
  /** `/metrics` on the loopback interface, when a metrics port was asked for. */
  metricsUrl: string | undefined;
  close(): Promise<void>;
}

export async function startOps({ logger, redis, metricsPort }: OpsOptions): Promise<Ops> {
  const log = accessLog(logger);
  const metrics = new BridgeMetrics();
  const probes: StoreProbe[] = [];
  if (redis) probes.push(() => redis.check());
  const readiness = new Readiness(probes);
  const served = metricsPort === undefined ? undefined : await serveMetrics(metrics, metricsPort);
  if (served) logger.info({ metrics: served.url }, `metrics on ${served.url}`);
  const observers: ServerObserver[] = [metrics.observer, log.observer];
  const observer: ServerObserver = {
    streamOpened: (transport) => observers.forEach((o) => o.streamOpened?.(transport)),
    streamClosed: (summary) => observers.forEach((o) => o.streamClosed?.(summary)),
    streamRefused: (refusal) => observers.forEach((o) => o.streamRefused?.(refusal)),
    turnEnded: (outcome) => observers.forEach((o) => o.turnEnded?.(outcome)),
    sessionEvicted: (reason) => observers.forEach((o) => o.sessionEvicted?.(reason)),
  };
  return {
    accessLog: log.middleware,
    metrics,
    readiness,
    observer,
    metricsUrl: served?.url,
    async close() {
      metrics.close();
      if (served) await new Promise<void>((resolve) => served.server.close(() => resolve()));
    },
  };
}
