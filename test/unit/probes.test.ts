// The probes worker and bridge serve on their metrics port.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { serveMetrics } from '../../src/infra/metrics';

describe('the probes on the metrics port', () => {
  it('answers /healthz at once and /readyz only once the process says it is ready', async () => {
    let ready = false;
    const server = await serveMetrics(0, '127.0.0.1', () => ready);
    try {
      const status = async (p: string) => (await fetch(`http://127.0.0.1:${server.port}${p}`)).status;
      expect(await status('/healthz')).toBe(200);
      expect(await status('/readyz')).toBe(503);
      ready = true;
      expect(await status('/readyz')).toBe(200);
      expect(await status('/metrics')).toBe(200);
      expect(await status('/other')).toBe(404);
    } finally {
      await server.close();
    }
  });

  it('fails /healthz and /readyz once the process is stopping, and closes with a probe connection kept alive', async () => {
    const server = await serveMetrics(0, '127.0.0.1', () => true);
    const agent = new http.Agent({ keepAlive: true });
    const status = (p: string) =>
      new Promise<number>((resolve, reject) =>
        http
          .get({ host: '127.0.0.1', port: server.port, path: p, agent }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on('error', reject),
      );
    try {
      expect(await status('/healthz')).toBe(200);
      server.stopping();
      expect(await status('/healthz')).toBe(503);
      expect(await status('/readyz')).toBe(503);
      expect(await status('/metrics')).toBe(200);
    } finally {
      const closed = Date.now();
      await server.close();
      expect(Date.now() - closed).toBeLessThan(1000);
      agent.destroy();
    }
  });
});
