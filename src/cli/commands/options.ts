// The options that several command groups share (the cluster, the Kyma, -o, --wait, direct
// installs and their sources), how they are added to a command and how their values are read.
import { Option, type Command } from 'commander';
import { configFromEnv, durationMs } from '../../infra/config';
import { Registries } from '../../oci/registries';
import type { ClusterOptions } from '../cluster';
import { dockerConfigCredentials } from '../docker-credentials';
import type { SourceOptions } from '../module-source';
import { UsageError } from '../output';

/** Where upstream keeps the Kyma of a runtime; the control plane's are named with --kyma. */
export const DEFAULT_KYMA = 'kyma-system/default';

export interface ModuleCommandOptions extends ClusterOptions {
  kyma: string;
  output: string;
}

export interface WaitOptions {
  wait?: boolean;
  timeout: string;
}

/** --timeout in milliseconds; a value that is no duration is a usage error. */
export function timeoutOf(o: WaitOptions): number {
  try {
    return durationMs(o.timeout, 300_000);
  } catch (err) {
    throw new UsageError(`--timeout: ${(err as Error).message}`);
  }
}

export function withCluster(c: Command): Command {
  return c
    .option('--kubeconfig <file>', 'the kubeconfig (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'the kubeconfig context (default: its current one)');
}

export function withKyma(c: Command): Command {
  return withCluster(c).option('--kyma <namespace/name>', 'the Kyma whose modules these are', DEFAULT_KYMA);
}

export function withOutput(c: Command): Command {
  return c.addOption(
    new Option('-o, --output <format>', 'table, json or yaml').default('table').choices(['table', 'json', 'yaml']),
  );
}

export function withWait(c: Command): Command {
  return c
    .option('--wait', 'wait until the lifecycle manager has done it')
    .option('--timeout <duration>', 'how long --wait waits (30s, 5m, …)', '5m');
}

export interface DirectOptions {
  directNamespace: string;
}

/** Where direct installs go (as the Kyma CLI: kyma-system by default). */
export function withDirect(c: Command): Command {
  return c.option(
    '--direct-namespace <ns>',
    "direct installs: the namespace of their objects that name none, and of klm's record of them",
    'kyma-system',
  );
}

export interface SourceFlags {
  registry?: string;
}

/** Where a direct install fetches a module's manifest when its template has no link. */
export function withSources(c: Command): Command {
  return c.option(
    '--registry <host[/path]>',
    "direct installs: the OCI registry of the modules' components, for templates with descriptor {} (default KLM_OCI_REGISTRY_HOST)",
  );
}

export function sourcesOf(o: SourceFlags): SourceOptions {
  const config = configFromEnv(process.env);
  const registry = o.registry ? { host: o.registry } : config.ociRegistry;
  const credentials = dockerConfigCredentials();
  return {
    registries: new Registries({
      insecureHosts: [
        ...config.registry.insecureHosts,
        ...(o.registry && /^http:\/\//i.test(o.registry) ? [new URL(o.registry).host] : []),
      ],
      ...(config.registry.caFile ? { caFile: config.registry.caFile } : {}),
      ...(credentials ? { credentials } : {}),
      caSetting: 'KLM_REGISTRY_CA_FILE',
    }),
    ...(registry ? { registry } : {}),
  };
}
