import type { RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import type { Logger, ServerObserver } from '@eve-flue/compat-server';
import { accessLog } from './access-log.ts';
import { BridgeMetrics, serveMetrics } from './metrics.ts';
import { Readiness, type StoreProbe } from './readiness.ts';

export interface OpsOptions {
  logger: Logger;
  /** The instance's shared Redis command connection, when there is one: readiness pings it. */
  redis?: Redis;
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
  // The connection the stores use: ready means their commands get through, not just some connection's.
  if (redis) probes.push(async () => void (await redis.ping()));
  const readiness = new Readiness(probes);
  const served = metricsPort === undefined ? undefined : await serveMetrics(metrics, metricsPort);
  if (served) logger.info({ metrics: served.url }, `metrics on ${served.url}`);
  const observers: ServerObserver[] = [metrics.observer, log.observer];
  const observer: ServerObserver = {
    streamOpened: (transport) => observers.forEach((o) => o.streamOpened?.(transport)),
    streamClosed: (summary) => observers.forEach((o) => o.streamClosed?.(summary)),
    streamRefused: (refusal) => observers.forEach((o) => o.streamRefused?.(refusal)),
    turnEnded: (outcome) => observers.forEach((o) => o.turnEnded?.(outcome)),
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
