// Serves dist/ and passes /api (requests and the event WebSocket) on to the svc server, so that the page and the
// API share one origin (svc sends no CORS headers). Start the server first (`pnpm demo` at the repository root).
//   SVC_URL=http://127.0.0.1:8000 PORT=5173 node serve.mjs
import { readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';

const target = new URL(process.env.SVC_URL ?? 'http://127.0.0.1:8000');
const port = Number(process.env.PORT ?? 5173);
const files = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
};

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  if (path.startsWith('/api/')) {
    const upstream = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
    return;
  }
  const file = files[path];
  if (!file) return void res.writeHead(404).end();
  res
    .writeHead(200, { 'content-type': file[1] })
    .end(readFileSync(new URL(`dist/${file[0]}`, import.meta.url)));
});

// The event stream: the WebSocket handshake and its frames go through as bytes.
server.on('upgrade', (req, socket, head) => {
  const upstream = connect(Number(target.port), target.hostname, () => {
    const headers = Object.entries(req.headers).map(([name, value]) => `${name}: ${value}`);
    upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`);
    upstream.write(head);
    upstream.pipe(socket).pipe(upstream);
  });
  upstream.on('error', () => socket.destroy());
  socket.on('error', () => upstream.destroy());
});

server.listen(port, '127.0.0.1', () =>
  console.log(`client-demo: http://127.0.0.1:${port} (API: ${target.origin})`),
);
