#!/usr/bin/env node
// docs/performance.md "Benchmark suite": the load generator, in its own process (forked by bench/lib/http.mjs) so that autocannon's work is
// never counted on the server's event loop. It runs one job at a time and sends its figures back.
//
// A job: { url, method, connections, seconds, body?, bodies?, amount?, rate?, contentType?, headers?, tokens?, chain? }
//   rate:   requests a second at even intervals, open loop (`paced` below, not autocannon); none: as fast as answered;
//   headers: extra request headers (a cookie, the `Origin` a browser sends);
//   bodies: request bodies, one per request in rotation;
//   paths:  request paths, one per request in rotation (with `bodies`: the writes spread over several rows);
//   amount: stop after this many requests if `seconds` are not over first (single-use bodies: their number);
//   tokens: bearer tokens, one per request in rotation (`Authorization: Bearer …`);
//   chain:  'refresh': each request spends a refresh token and keeps the rotated one from the response for a
//           later request (tokens kept across jobs; a request in flight when a job ends loses its chain).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

const refreshPool = [];
let next = 0;

function requestsOf(job) {
  if (job.chain === 'refresh') {
    if (job.seedTokens) refreshPool.push(...job.seedTokens);
    return [
      {
        method: 'POST',
        setupRequest: (req) => {
          const token = refreshPool.shift();
          if (!token) throw new Error('refresh chain exhausted');
          return {
            ...req,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ refresh_token: token }),
          };
        },
        onResponse: (status, body) => {
          if (status !== 200) return;
          const parsed = JSON.parse(body);
          refreshPool.push((parsed.data ?? parsed).refresh_token);
        },
      },
    ];
  }
  const headers = { ...job.headers, ...(job.contentType ? { 'content-type': job.contentType } : {}) };
  if (job.bodies) {
    // one body per request in rotation (logins of distinct users), and one path if given
    return [
      {
        method: job.method,
        headers,
        setupRequest: (req) => {
          const i = next++;
          return {
            ...req,
            body: job.bodies[i % job.bodies.length],
            ...(job.paths ? { path: job.paths[i % job.paths.length] } : {}),
          };
        },
      },
    ];
  }
  if (!job.tokens) return [{ method: job.method, headers, body: job.body }];
  return [
    {
      method: job.method,
      body: job.body,
      setupRequest: (req) => ({
        ...req,
        headers: { ...headers, authorization: `Bearer ${job.tokens[next++ % job.tokens.length]}` },
      }),
    },
  ];
}

/**
 * A job with `rate`: requests sent at even intervals (open loop), each timed from its send to its answer, on
 * kept-alive connections (at most `connections` at once; a request finding none free waits, and that wait
 * counts). autocannon's `overallRate` sends each second's requests in bursts, so its latencies at a fixed rate
 * measure its own bursts: a trivial server answered p50 3 / p99 65 ms at 100 requests a second that way, against
 * well under a millisecond at even intervals.
 */
async function paced(job) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: job.connections });
  const url = new URL(job.url);
  const interval = 1000 / job.rate;
  const latencies = [];
  let non2xx = 0;
  let errors = 0;
  let sent = 0;
  const inFlight = new Set();
  const started = performance.now();
  const end = started + job.seconds * 1000;
  const one = (i) =>
    new Promise((resolve) => {
      const headers = { ...job.headers };
      if (job.tokens) headers.authorization = `Bearer ${job.tokens[i % job.tokens.length]}`;
      // Timed from when it was due, not from when it went out (no coordinated omission).
      const due = started + i * interval;
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: job.method,
          headers,
          agent,
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - due);
            if (res.statusCode < 200 || res.statusCode >= 300) non2xx++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  while (performance.now() < end) {
    const due = Math.floor((performance.now() - started) / interval) + 1;
    while (sent < due) {
      const p = one(sent++);
      inFlight.add(p);
      void p.then(() => inFlight.delete(p));
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, started + sent * interval - performance.now())),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor((q / 100) * latencies.length))] ?? 0;
  return {
    rps: latencies.length / job.seconds,
    p50: Math.round(at(50) * 10) / 10,
    p99: Math.round(at(99) * 10) / 10,
    max: Math.round((latencies.at(-1) ?? 0) * 10) / 10,
    total: latencies.length,
    non2xx,
    errors,
    pool: refreshPool.length,
  };
}

process.on('message', async (job) => {
  try {
    if (job.rate) {
      process.send(await paced(job));
      return;
    }
    const r = await autocannon({
      url: job.url,
      connections: job.connections,
      duration: job.seconds,
      ...(job.amount ? { amount: job.amount } : {}),
      requests: requestsOf(job),
    });
    process.send({
      // A job that ends at `amount` may end within its first second, where autocannon's per-second average has
      // no whole sample: its rate is the requests over the time taken.
      rps: job.amount ? r.requests.total / r.duration : r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      max: r.latency.max,
      total: r.requests.total,
      non2xx: r.non2xx,
      errors: r.errors + r.timeouts,
      pool: refreshPool.length,
    });
  } catch (error) {
    process.send({ error: String(error?.stack ?? error) });
  }
});
