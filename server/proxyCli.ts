import { parseArgs } from 'node:util';
import { startCorsProxy } from './corsProxy.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8082' },
    host: { type: 'string', default: '127.0.0.1' },
    'allow-private': { type: 'boolean', default: false },
    http: { type: 'boolean', default: false },
    log: { type: 'boolean', default: false },
    origin: { type: 'string', multiple: true },
  },
});

const proxy = await startCorsProxy({
  port: Number(values.port),
  host: values.host,
  allowPrivate: values['allow-private'],
  upstreamProtocol: values.http ? 'http' : 'https',
  log: values.log,
  allowedOrigins: values.origin,
});
console.log(`CORS proxy for git smart-HTTP: ${proxy.url}/<host>/<repo path>`);
if (!values.origin) console.log('Any page origin may use it; pass --origin https://your.app to limit it.');
process.on('SIGINT', () => void proxy.close().then(() => process.exit(0)));
