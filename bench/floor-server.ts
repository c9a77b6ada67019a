/**
 * The floor of the HTTP benchmark: a plain Node.js HTTP server that only reads a body, parses it
 * with JSON.parse and answers JSON.stringify of the result. No framework, no logging, no checks.
 * Any hook costs at least this much per request; the benchmark reports hooks as a ratio to it.
 *
 *   node --import tsx bench/floor-server.ts <port>
 */
import http from 'node:http';

const port = Number(process.argv[2]);

const server = http.createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200).end('ok'); // readiness, for the benchmark
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let out: string;
    try {
      out = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    } catch {
      res.writeHead(400).end();
      return;
    }
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(out),
    });
    res.end(out);
  });
});
// As the hook server (hooks/main.ts): keep-alive connections outlive the client's.
server.keepAliveTimeout = 95_000;
server.headersTimeout = 96_000;
server.listen(port, '127.0.0.1');
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0));
