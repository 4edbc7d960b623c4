import type { IncomingMessage, ServerResponse } from 'node:http';

const GIT_REQUEST_HEADERS = 'Git-Protocol, Content-Type, Authorization, Accept, Content-Encoding';

/**
 * CORS for a server a page talks git to directly (the test git server, the bench's counting relay). The
 * origin is echoed, not `*`, so a page may send credentials to the auth test repository.
 */
export function setGitCorsHeaders(
  req: IncomingMessage,
  res: ServerResponse,
  opts: { echoRequestedHeaders?: boolean } = {},
): void {
  const origin = req.headers.origin;
  if (origin) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Access-Control-Allow-Credentials', 'true');
    res.setHeader('Vary', 'Origin');
  } else {
    res.setHeader('Access-Control-Allow-Origin', '*');
  }
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  const requested = opts.echoRequestedHeaders ? req.headers['access-control-request-headers'] : undefined;
  res.setHeader('Access-Control-Allow-Headers', requested ?? GIT_REQUEST_HEADERS);
  res.setHeader('Access-Control-Expose-Headers', 'Content-Type, WWW-Authenticate');
  res.setHeader('Access-Control-Max-Age', '600');
  // Chrome's Private Network Access asks before a public page may reach a server on localhost.
  if (req.headers['access-control-request-private-network'] === 'true') {
    res.setHeader('Access-Control-Allow-Private-Network', 'true');
  }
}
