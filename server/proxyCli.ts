import { parseArgs } from 'node:util';
import { startCorsProxy } from './proxy/nodeProxy.ts';

/**
 *   npx tsx server/proxyCli.ts [--port N] [--host H] [--origin https://your.app]... [--port-allow N]...
 *                              [--allow-private] [--http] [--log] [--trust-proxy] [--no-rate-limit]
 */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8082' },
    host: { type: 'string', default: '127.0.0.1' },
    'allow-private': { type: 'boolean', default: false },
    http: { type: 'boolean', default: false },
    log: { type: 'boolean', default: false },
    origin: { type: 'string', multiple: true },
    'port-allow': { type: 'string', multiple: true },
    'trust-proxy': { type: 'boolean', default: false },
    'no-rate-limit': { type: 'boolean', default: false },
  },
});

const allowedPorts = (values['port-allow'] ?? []).map((p) => {
  const n = Number(p);
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    console.error(`--port-allow takes a port number (1-65535), not ${p}.`);
    process.exit(2);
  }
  return n;
});

const proxy = await startCorsProxy({
  port: Number(values.port),
  host: values.host,
  allowPrivate: values['allow-private'],
  upstreamProtocol: values.http ? 'http' : 'https',
  log: values.log,
  allowedOrigins: values.origin,
  allowedPorts,
  trustProxy: values['trust-proxy'],
  rateLimit: values['no-rate-limit'] ? false : undefined,
});
console.log(`CORS proxy for git smart-HTTP: ${proxy.url}/<host>/<repo path>`);
console.log(`Upstream ports: 443, 80${allowedPorts.map((p) => `, ${p}`).join('')}.`);
if (!values.origin) console.log('Any page origin may use it; pass --origin https://your.app to limit it.');
if (values.http) console.log('--http: git hosts are spoken to in plain http, so credentials are refused.');
process.on('SIGINT', () => void proxy.close().then(() => process.exit(0)));
process.on('SIGTERM', () => void proxy.close().then(() => process.exit(0)));
