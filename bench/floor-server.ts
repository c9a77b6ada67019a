/**
 * The floor of the HTTP benchmark: a plain Node.js HTTP server that only reads a body, parses it
 * with JSON.parse and answers JSON.stringify of the result. No framework, no logging, no checks.
 * Any hook costs at least this much per request; the benchmark reports hooks as a ratio to it.
 * With a TLS port, certificate and key, the same floor is served over HTTPS too, the floor of
 * the admission webhook (bench/floor-tls.ts).
 *
 *   node --import tsx bench/floor-server.ts <port> [<tls port> <cert file> <key file>]
 */
import { readFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { listenPlainAndTls } from './floor-tls.js';

const [port, tlsPort, certFile, keyFile] = process.argv.slice(2);

const floor: RequestListener = (req, res) => {
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
};

listenPlainAndTls(
  floor,
  Number(port),
  tlsPort !== undefined && certFile !== undefined && keyFile !== undefined
    ? {
        port: Number(tlsPort),
        cert: readFileSync(certFile, 'utf8'),
        key: readFileSync(keyFile, 'utf8'),
      }
    : undefined,
);
