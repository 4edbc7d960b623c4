import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const gitServer = inject('gitServerUrl');
const gitHost = new URL(gitServer).host;
const cli = join(import.meta.dirname, 'proxyCli.ts');

/** The proxy as a person runs it: its own process, its flags, its first line of output. */
async function runProxy(
  args: string[],
  ready: RegExp,
): Promise<{ child: ChildProcess; url: string; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    output += c.toString();
  });
  while (!ready.test(output)) {
    if (child.exitCode !== null) throw new Error(`the proxy exited: ${output}`);
    await once(child.stdout!, 'data');
  }
  const url = /(http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1];
  return { child, url, output };
}

describe('server/proxyCli.ts, run as a process', () => {
  let proxy: Awaited<ReturnType<typeof runProxy>>;
  beforeAll(async () => {
    proxy = await runProxy(['--origin', 'http://app.test', '--port-allow', '8443', '--http'], /--http: .*\n/);
  });
  afterAll(async () => {
    proxy.child.kill('SIGTERM');
    if (proxy.child.exitCode === null) await once(proxy.child, 'exit');
  });

  it('says which ports it reaches and that --http refuses credentials', () => {
    expect(proxy.output).toContain('Upstream ports: 443, 80, 8443.');
    expect(proxy.output).toMatch(/--http: .*credentials are refused/);
  });

  it('refuses a request with no Origin, and one from another origin', async () => {
    const target = `${proxy.url}/${gitHost}/basic.git/info/refs?service=git-upload-pack`;
    const none = await fetch(target);
    expect(none.status).toBe(403);
    expect(none.headers.get('x-blobless-proxy-refusal')).toBe('1');
    const other = await fetch(target, { headers: { Origin: 'http://evil.test' } });
    expect(other.status).toBe(403);
  });

  it('refuses a port it was not given, and a private host on one it was', async () => {
    const headers = { Origin: 'http://app.test' };
    const port = await fetch(`${proxy.url}/140.82.112.3:8080/r.git/info/refs?service=git-upload-pack`, {
      headers,
    });
    expect(port.status).toBe(403);
    expect(await port.text()).toMatch(/ports 443, 80, 8443 only, not 8080/);
    const loopback = await fetch(
      `${proxy.url}/[::ffff:0:7f00:1]:8443/r.git/info/refs?service=git-upload-pack`,
      {
        headers,
      },
    );
    expect(loopback.status).toBe(403);
    expect(await loopback.text()).toMatch(/loopback or private/);
  });

  it('rejects a --port-allow that is not a port', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, '--port', '0', '--port-allow', 'ssh'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const [code] = await once(child, 'exit');
    expect(code).toBe(2);
    expect(err).toMatch(/--port-allow takes a port number/);
  });
});
