// A TLS terminator in front of a server that speaks no TLS (the Temporal dev server), for the
// tests that prove Temporal over mTLS: it accepts TLS on a loopback port (ALPN h2, as gRPC
// clients ask), demands a client certificate issued by its CA, and forwards the bytes in clear.
// Node's tls module does this in a few lines, without another package on the machine.
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import tls from 'node:tls';

export interface TlsTerminatorOptions {
  /** host:port of the server behind it. */
  backend: string;
  /** PEM files: its serving certificate and key, and the CA that client certificates must chain to. */
  cert: string;
  key: string;
  clientCa: string;
}

export interface TlsTerminator {
  /** 127.0.0.1:<port> */
  address: string;
  /** Connections that completed the handshake with a valid client certificate, and those refused. */
  readonly accepted: number;
  readonly refused: number;
  stop(): Promise<void>;
}

export async function startTlsTerminator(o: TlsTerminatorOptions): Promise<TlsTerminator> {
  const colon = o.backend.lastIndexOf(':');
  const [host, port] = [o.backend.slice(0, colon), Number(o.backend.slice(colon + 1))];
  const [cert, key, ca] = await Promise.all([readFile(o.cert), readFile(o.key), readFile(o.clientCa)]);
  const counts = { accepted: 0, refused: 0 };
  const open = new Set<net.Socket>();
  const server = tls.createServer(
    { cert, key, ca, requestCert: true, rejectUnauthorized: true, ALPNProtocols: ['h2'] },
    (client) => {
      counts.accepted++;
      const upstream = net.connect(port, host);
      for (const s of [client, upstream]) {
        open.add(s);
        s.on('close', () => open.delete(s));
      }
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
      client.pipe(upstream).pipe(client);
    },
  );
  server.on('tlsClientError', () => counts.refused++);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', () => resolve()));
  const address = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return {
    address,
    get accepted() {
      return counts.accepted;
    },
    get refused() {
      return counts.refused;
    },
    async stop() {
      for (const s of open) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
