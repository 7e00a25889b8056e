/**
 * A fault-injecting proxy for the test environment, in front of a cluster's apiserver (TLS, with
 * the apiserver's own certificate, exec upgrades included) or moto (plain HTTP). A test points
 * its clients at the proxy and, while they work, pauses it (requests are held until resumed, as
 * a stopped apiserver holds them), kills it (open connections are cut and new ones refused,
 * until revived on the same port), or answers chosen requests with an error (429 and 5xx storms,
 * S3 SlowDown). Fault injection lives here only, never in product code.
 */
import { readFile } from 'node:fs/promises';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import httpProxy from 'http-proxy';
import type { ClusterInfo } from './cluster.js';

/** Which requests a fault answers, and with what. */
export interface FaultRule {
  readonly method?: string;
  /** Matched against the request's path and query. */
  readonly path?: RegExp;
  /** Matched against the request's body (the request is then read whole before it goes on). */
  readonly body?: RegExp;
  /** Answer only this many matching requests; unset: every one until the rule is removed. */
  readonly times?: number;
  /** Answer every n-th matching request only (the others pass): a storm with gaps. */
  readonly every?: number;
  readonly status: number;
  readonly answer?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A rule in force: how many requests it answered, and how to remove it. */
export interface InjectedFault {
  readonly hits: number;
  readonly matched: number;
  remove(): void;
}

interface ActiveRule {
  readonly rule: FaultRule;
  hits: number;
  matched: number;
  removed: boolean;
}

export interface ProxyCounts {
  /** Requests passed on to the target. */
  forwarded: number;
  /** Requests answered with a fault. */
  faulted: number;
  /** Requests held while paused. */
  held: number;
  /** Connections cut by a kill. */
  cut: number;
  /** Connections clients opened (keep-alive reuses one for many requests). */
  opened: number;
}

export class FaultProxy {
  readonly counts: ProxyCounts = { forwarded: 0, faulted: 0, held: 0, cut: 0, opened: 0 };
  private readonly rules: ActiveRule[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly listeners: ((req: IncomingMessage) => void)[] = [];
  private waiting: (() => void)[] = [];
  private paused = false;
  private listening = false;

  private constructor(
    private readonly server: Server,
    private readonly proxy: httpProxy,
    readonly port: number,
    readonly url: string,
  ) {}

  /** A proxy in front of a cluster's apiserver, presenting the apiserver's own certificate. */
  static async forCluster(cluster: ClusterInfo): Promise<FaultProxy> {
    const pki = join(cluster.dir, 'pki');
    const [cert, key, ca] = await Promise.all([
      readFile(join(pki, 'apiserver.crt')),
      readFile(join(pki, 'apiserver.key')),
      readFile(cluster.caFile, 'utf8'),
    ]);
    const target = new URL(cluster.server);
    const proxy = httpProxy.createProxyServer({
      target: { protocol: 'https:', host: target.hostname, port: Number(target.port), ca },
      secure: true,
      ws: true,
    });
    return FaultProxy.listen({ proxy, server: createHttpsServer({ cert, key }), scheme: 'https' });
  }

  /**
   * A proxy in front of a plain HTTP endpoint (moto). `keepAlive`: clients' connections stay open
   * as S3's do (moto answers every request with `Connection: close`), so a test sees whether a
   * client reuses them.
   */
  static async forHttp(endpoint: string, options: { keepAlive?: boolean } = {}): Promise<FaultProxy> {
    const proxy = httpProxy.createProxyServer({ target: endpoint });
    if (options.keepAlive) proxy.on('proxyRes', (res: IncomingMessage) => delete res.headers.connection);
    return FaultProxy.listen({ proxy, server: createHttpServer(), scheme: 'http' });
  }

  private static async listen(options: {
    proxy: httpProxy;
    server: Server;
    scheme: 'http' | 'https';
  }): Promise<FaultProxy> {
    const { proxy, server } = options;
    await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
    const address = server.address();
    if (!address || typeof address !== 'object') throw new Error('fault proxy: no port');
    const host = options.scheme === 'https' ? '127.0.0.1' : 'localhost';
    const fault = new FaultProxy(server, proxy, address.port, `${options.scheme}://${host}:${address.port}`);
    fault.listening = true;
    fault.wire();
    return fault;
  }

  private wire(): void {
    this.server.on('connection', (socket: Socket) => {
      this.counts.opened++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server.on('secureConnection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    this.server.on('request', (req: IncomingMessage, res: ServerResponse) => void this.handle(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      this.sockets.add(socket);
      void this.whenRunning().then(() => {
        this.counts.forwarded++;
        this.proxy.ws(req, socket, head);
      });
    });
    // A cut connection or a target that went away: the client sees its connection fail.
    this.proxy.on('error', (_error, _req, res) => {
      if ('writeHead' in res && !res.headersSent) {
        res.writeHead(502);
        res.end();
      } else res.destroy();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const listener of this.listeners) listener(req);
    await this.whenRunning();
    // Rules on bodies need the body before the request goes on: it is read whole, then replayed.
    const body = this.rules.some((r) => !r.removed && r.rule.body) ? await readBody(req) : undefined;
    const rule = this.ruleFor(req, body?.toString('utf8'));
    if (rule) {
      this.counts.faulted++;
      req.resume();
      res.writeHead(rule.status, { 'content-type': 'application/json', ...rule.headers });
      res.end(
        rule.answer ?? JSON.stringify({ kind: 'Status', code: rule.status, message: 'injected fault' }),
      );
      return;
    }
    this.counts.forwarded++;
    this.proxy.web(req, res, body ? { buffer: Readable.from([body]) } : {});
  }

  private ruleFor(req: IncomingMessage, body: string | undefined): FaultRule | undefined {
    for (const active of this.rules) {
      const { rule } = active;
      if (active.removed || (rule.times !== undefined && active.hits >= rule.times)) continue;
      if (rule.method && rule.method !== req.method) continue;
      if (rule.path && !rule.path.test(req.url ?? '')) continue;
      if (rule.body && !rule.body.test(body ?? '')) continue;
      active.matched++;
      if (rule.every && active.matched % rule.every !== 0) continue;
      active.hits++;
      return rule;
    }
    return undefined;
  }

  private whenRunning(): Promise<void> {
    if (!this.paused) return Promise.resolve();
    this.counts.held++;
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Answers the requests the rule matches with its error, until removed (or `times` runs out). */
  inject(rule: FaultRule): InjectedFault {
    const active: ActiveRule = { rule, hits: 0, matched: 0, removed: false };
    this.rules.push(active);
    return {
      get hits() {
        return active.hits;
      },
      get matched() {
        return active.matched;
      },
      remove: () => {
        active.removed = true;
      },
    };
  }

  /** Calls the listener with every request as it arrives (before any fault). */
  onRequest(listener: (req: IncomingMessage) => void): void {
    this.listeners.push(listener);
  }

  /** Holds every request from now on, as a stopped (SIGSTOP) server holds them. */
  pause(): void {
    this.paused = true;
  }

  /** Lets the held requests through, and every later one. */
  resume(): void {
    this.paused = false;
    const waiting = this.waiting;
    this.waiting = [];
    for (const go of waiting) go();
  }

  /** As a killed server: every open connection is cut, and new ones are refused until revive(). */
  async kill(): Promise<void> {
    if (!this.listening) return;
    this.listening = false;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) {
      this.counts.cut++;
      socket.destroy();
    }
    this.sockets.clear();
    await closed;
  }

  /** Listens again on the same port, as a restarted server. */
  async revive(): Promise<void> {
    if (this.listening) return;
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: '127.0.0.1', port: this.port }, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.listening = true;
  }

  async close(): Promise<void> {
    this.resume();
    await this.kill();
    this.proxy.close();
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** An S3 error body as S3 (and moto) spell it. */
export function s3ErrorBody(code: string, message: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message><RequestId>fault</RequestId></Error>`;
}
