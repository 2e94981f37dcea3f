// The fleet server's client of Prometheus' HTTP API (issue 30, 3): at most MAX_CONCURRENT_REQUESTS
// requests open at once whatever the page asks (the rest wait their turn, none is lost), each
// counted, failures too. Against a stand-in HTTP server that answers slowly (no Prometheus needed).
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MAX_CONCURRENT_REQUESTS, PrometheusApi, PrometheusError } from '../src/fleet/prometheus-api.js';

async function slowServer(t: TestContext, handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('at most MAX_CONCURRENT_REQUESTS requests are open at once; every one is answered and counted', async (t) => {
  let open = 0;
  let most = 0;
  const url = await slowServer(t, (req, res) => {
    open++;
    most = Math.max(most, open);
    setTimeout(() => {
      open--;
      res.writeHead(req.url?.includes('fail') ? 500 : 200, { 'content-type': 'application/json' });
      res.end(
        req.url?.includes('fail')
          ? '{"status":"error","errorType":"internal","error":"boom"}'
          : '{"status":"success","data":{"activeTargets":[]}}',
      );
    }, 60);
  });
  const api = new PrometheusApi(url);
  const asks = Array.from({ length: 3 * MAX_CONCURRENT_REQUESTS + 1 }, () => api.targets());
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual([api.stats.inFlight, api.stats.waiting], [MAX_CONCURRENT_REQUESTS, 2 * MAX_CONCURRENT_REQUESTS + 1]);
  const answers = await Promise.all(asks);
  assert.equal(answers.length, 3 * MAX_CONCURRENT_REQUESTS + 1);
  assert.equal(most, MAX_CONCURRENT_REQUESTS, 'the server never saw more open at once');
  assert.deepEqual(api.stats, { requests: 3 * MAX_CONCURRENT_REQUESTS + 1, failed: 0, inFlight: 0, waiting: 0 });

  const failing = new PrometheusApi(`${url}/fail`);
  await assert.rejects(failing.targets(), (e) => e instanceof PrometheusError && /internal: boom/.test(e.message));
  assert.deepEqual(failing.stats, { requests: 1, failed: 1, inFlight: 0, waiting: 0 });
});
