// How the processes reach Temporal, as the Temporal SDKs and CLI configure it: the SDK's
// environment configuration (@temporalio/envconfig) reads TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_API_KEY, TEMPORAL_TLS and TEMPORAL_TLS_* (client certificate and key, server CA,
// server name), TEMPORAL_GRPC_META_*, and profiles from TEMPORAL_CONFIG_FILE / TEMPORAL_PROFILE
// (default ~/.config/temporalio/temporal.toml). Credentials stay in the connection options: what
// is shown of the connection names the address and the kind of authentication only.
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';

export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';

export interface TemporalTarget {
  /** For NativeConnection.connect and Connection.connect. */
  connectionOptions: NativeConnectionOptions & { address: string };
  namespace: string;
  /** The address and how the connection authenticates (TLS, client certificate, API key), never a credential. */
  describe: string;
}

export class TemporalConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemporalConfigError';
  }
}

export function describeTemporal(o: Pick<NativeConnectionOptions, 'address' | 'tls' | 'apiKey'>): string {
  const tls = o.tls
    ? typeof o.tls === 'object' && o.tls.clientCertPair
      ? 'TLS with a client certificate'
      : 'TLS'
    : 'plaintext';
  return `${o.address ?? DEFAULT_TEMPORAL_ADDRESS} (${[tls, ...(o.apiKey ? ['API key'] : [])].join(', ')})`;
}

/** The Temporal connection from the environment (and the profile it names, if any). */
export function temporalFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalTarget {
  let loaded;
  try {
    loaded = loadClientConnectConfig({
      overrideEnvVars: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    });
  } catch (err) {
    // The loader's messages name files and profiles; a TOML parse error could quote a line of
    // the file, which may hold a key: say where the configuration comes from, not what it says.
    const e = err as NodeJS.ErrnoException;
    const what =
      e.code === 'ENOENT' || e.code === 'EACCES'
        ? `cannot read ${e.path ?? 'a file it names'} (${e.code})`
        : e.message.startsWith('Profile')
          ? e.message
          : 'it cannot be read (check TEMPORAL_CONFIG_FILE and the TEMPORAL_TLS_* settings)';
    throw new TemporalConfigError(`Temporal connection configuration: ${what}`);
  }
  const connectionOptions = {
    ...loaded.connectionOptions,
    address: loaded.connectionOptions.address ?? DEFAULT_TEMPORAL_ADDRESS,
  };
  return { connectionOptions, namespace: loaded.namespace ?? 'default', describe: describeTemporal(connectionOptions) };
}
