#!/usr/bin/env node
// docs/performance.md "Benchmark suite": the load generator, in its own process (forked by bench/lib/http.mjs) so that autocannon's work is
// never counted on the server's event loop. It runs one job at a time and sends its figures back.
//
// A job: { url, method, connections, seconds, body?, bodies?, amount?, rate?, contentType?, headers?, tokens?, chain? }
//   rate:   requests a second over all connections (autocannon's overallRate); none: as fast as answered;
//   headers: extra request headers (a cookie, the `Origin` a browser sends);
//   bodies: request bodies, one per request in rotation;
//   paths:  request paths, one per request in rotation (with `bodies`: the writes spread over several rows);
//   amount: stop after this many requests if `seconds` are not over first (single-use bodies: their number);
//   tokens: bearer tokens, one per request in rotation (`Authorization: Bearer …`);
//   chain:  'refresh': each request spends a refresh token and keeps the rotated one from the response for a
//           later request (tokens kept across jobs; a request in flight when a job ends loses its chain).
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

process.on('message', async (job) => {
  try {
    const r = await autocannon({
      url: job.url,
      connections: job.connections,
      duration: job.seconds,
      ...(job.amount ? { amount: job.amount } : {}),
      // A fixed arrival rate over all connections (requests a second) instead of each connection's next
      // request as soon as its last is answered.
      ...(job.rate ? { overallRate: job.rate } : {}),
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
