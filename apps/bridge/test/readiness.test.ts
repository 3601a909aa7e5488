import { describe, expect, test } from '@jest/globals';
import express from 'express';
import request from 'supertest';
import { Readiness } from '../src/ops/readiness.ts';
import { routeOf } from '../src/ops/access-log.ts';

function appWith(readiness: Readiness) {
  const app = express();
  app.use(readiness.route(), readiness.refuseNewTurns());
  app.use((_request, response) => void response.status(202).json({ ok: true }));
  return app;
}

describe('readiness', () => {
  test('fails while starting, passes once ready, fails while draining', async () => {
    const readiness = new Readiness([]);
    const app = appWith(readiness);
    expect((await request(app).get('/ready')).status).toBe(503);
    readiness.markReady();
    expect((await request(app).get('/ready')).body).toEqual({ ok: true, status: 'ready' });
    readiness.startDraining();
    const draining = await request(app).get('/ready');
    expect(draining.status).toBe(503);
    expect(draining.body).toMatchObject({ ok: false, code: 'service_unavailable' });
  });

  test('fails while a store cannot be reached', async () => {
    let reachable = false;
    const readiness = new Readiness([async () => { if (!reachable) throw new Error('ECONNREFUSED'); }]);
    readiness.markReady();
    const app = appWith(readiness);
    expect((await request(app).get('/ready')).status).toBe(503);
    reachable = true;
    expect((await request(app).get('/ready')).status).toBe(200);
  });

  test('while draining, refuses messages that would start a turn, and nothing else', async () => {
    const readiness = new Readiness([]);
    readiness.markReady();
    readiness.startDraining();
    const app = appWith(readiness);
    expect((await request(app).post('/eve/v1/session').send({ message: 'hi' })).status).toBe(503);
    expect((await request(app).post('/eve/v1/session/ses_1').send({ message: 'hi' })).status).toBe(503);
    expect((await request(app).post('/eve/v1/session/ses_1/cancel')).status).toBe(202);
    expect((await request(app).get('/eve/v1/session/ses_1/stream')).status).toBe(202);
  });
});

describe('access log route patterns', () => {
  test('name the pattern and the session, never the raw path', () => {
    expect(routeOf('/eve/v1/session/ses_abc/stream')).toEqual({ route: '/eve/v1/session/:sessionId/stream', sessionId: 'ses_abc' });
    expect(routeOf('/eve/v1/oauth/start/att_secretish')).toEqual({ route: '/eve/v1/oauth/start/:attempt' });
    expect(routeOf('/eve/v1/oauth/callback')).toEqual({ route: '/eve/v1/oauth/callback' });
    expect(routeOf('/eve/v1/no/such/thing')).toEqual({ route: '(unmatched)' });
  });
});
