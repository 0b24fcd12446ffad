// One request to an API server, over the agent its credentials carry: a request fails when the
// server sends nothing for a while (30 s by default; a watch's stream excepted); a server that
// cannot be reached, does not answer or fails TLS raises ClusterUnreachableError. A request that
// went out on a kept-alive connection the server had closed is sent once more on a fresh one
// (not a create, which is not idempotent). Every request is told to the request observer (the
// process's metrics), a watch as `WATCH` until its answer begins.
import http from 'node:http';
import https from 'node:https';
import { ClusterUnreachableError, describeNetworkError } from './request-errors';

/** One request a KubeClient made (a watch as `WATCH`, until its answer began): `code` 0 when no answer came. */
export interface RequestRecord {
  cluster: string;
  method: string;
  code: number;
  seconds: number;
}

let requestObserver: ((r: RequestRecord) => void) | undefined;

/** Hears of every request of every KubeClient of the process (its metrics count them). */
export function observeRequests(observer: ((r: RequestRecord) => void) | undefined): void {
  requestObserver = observer;
}

/** One HTTP exchange with the API server: `timeoutMs` bounds a silence (the transport's own by default). */
export interface Exchange {
  method: string;
  url: URL;
  headers: Record<string, string>;
  agent: http.Agent;
  payload?: Buffer;
  timeoutMs?: number;
}

/** The opening of a watch: a GET whose answer streams until the server ends it or `signal` aborts it. */
export interface Opening {
  url: URL;
  headers: Record<string, string>;
  agent: http.Agent;
  signal: AbortSignal;
}

/** The API server's answer: its status code and body. */
export interface Answer {
  status: number;
  text: string;
}

export class Transport {
  constructor(
    private readonly server: string,
    /** How long a request may go without an answer (watches excepted). */
    private readonly timeoutMs: number,
    /** What the requests are counted as (`control-plane` or `target`). */
    private readonly cluster: string,
  ) {}

  /** One exchange, retried on a stale connection and counted. */
  async exchange(x: Exchange): Promise<Answer> {
    return await this.counted(
      x.method,
      () => this.retried(x.method, () => this.send(x)),
      (a) => a.status,
    );
  }

  /** Opens a watch: resolves with its answer once the status came (the stream is the caller's), retried on a stale connection and counted as `WATCH`. */
  async open(o: Opening): Promise<http.IncomingMessage> {
    return await this.counted(
      'WATCH',
      () => this.retried('GET', () => this.start(o)),
      (res) => res.statusCode ?? 0,
    );
  }

  /** `attempt`, told to the request observer with the status `code` gives of its result (0 when it failed). */
  private async counted<T>(method: string, attempt: () => Promise<T>, code: (result: T) => number): Promise<T> {
    if (!requestObserver) return await attempt();
    const start = performance.now();
    let status = 0;
    try {
      const result = await attempt();
      status = code(result);
      return result;
    } finally {
      requestObserver?.({
        cluster: this.cluster,
        method,
        code: status,
        seconds: (performance.now() - start) / 1000,
      });
    }
  }

  /** `attempt`, once more on a fresh connection when a kept-alive one turned out closed (not for creates, which are not idempotent). */
  private async retried<T>(method: string, attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (err) {
      if (!(err instanceof ClusterUnreachableError && err.staleConnection && method !== 'POST')) throw err;
      return await attempt();
    }
  }

  /** Why `req` failed; a kept-alive connection the server had closed is marked: the request never reached it. */
  private unreachable(req: http.ClientRequest, err: unknown): ClusterUnreachableError {
    const e = new ClusterUnreachableError(this.server, describeNetworkError(err));
    e.staleConnection = req.reusedSocket && (err as { code?: string }).code === 'ECONNRESET';
    return e;
  }

  /** One exchange; fails when the server sends nothing for `timeoutMs` (a long answer that streams is fine). */
  private send({ method, url, headers, agent, payload, timeoutMs = this.timeoutMs }: Exchange): Promise<Answer> {
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const req = transport.request(url, { method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          idle.refresh();
          chunks.push(c);
        });
        res.on('end', () => {
          clearTimeout(idle);
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (err) => fail(err));
      });
      const fail = (err: unknown) => {
        clearTimeout(idle);
        reject(this.unreachable(req, err));
      };
      const idle = setTimeout(
        () => req.destroy(Object.assign(new Error('timed out'), { code: 'KLM_TIMEOUT' })),
        timeoutMs,
      );
      req.on('error', fail);
      req.end(payload);
    });
  }

  /** One opening of a watch, without a deadline; once its answer came, a failure of the request is the stream's. */
  private start({ url, headers, agent, signal }: Opening): Promise<http.IncomingMessage> {
    const transport = url.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const fail = (err: unknown) => reject(this.unreachable(req, err));
      const req = transport.request(url, { method: 'GET', headers, agent, signal }, (res) => {
        req.off('error', fail);
        req.on('error', (err) => res.destroy(err));
        resolve(res);
      });
      req.on('error', fail);
      req.end();
    });
  }
}
