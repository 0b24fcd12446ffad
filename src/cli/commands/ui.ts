// `klm ui`: the web view of a Kyma's modules and the catalog, served on loopback until Ctrl-C.
// The web server loads when it runs (../ui/server.ts).
import type { Command } from 'commander';
import { configFromEnv } from '../../infra/config';
import { clusterClient, kymaRefOf, type ClusterOptions } from '../cluster';
import { UsageError } from '../output';
import { DEFAULT_KYMA, sourcesOf, withCluster, type DirectOptions, type SourceFlags } from './options';

type UiFlags = ClusterOptions &
  DirectOptions &
  SourceFlags & { kyma: string; address: string; port: string; temporalUi?: string };

async function serve(o: UiFlags): Promise<void> {
  const port = Number(o.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`--port needs a port number, not "${o.port}"`);
  kymaRefOf(o.kyma);
  const kube = await clusterClient(o);
  const { startUi } = await import('../ui/server');
  const server = await startUi({
    context: {
      kube,
      config: configFromEnv(process.env),
      directNamespace: o.directNamespace,
      sources: () => sourcesOf(o),
      crdTimeoutMs: configFromEnv(process.env).settings.crdEstablishedTimeoutMs,
      ...(o.temporalUi ? { temporalUi: o.temporalUi } : {}),
      ...(process.env.TEMPORAL_NAMESPACE ? { temporalNamespace: process.env.TEMPORAL_NAMESPACE } : {}),
    },
    address: o.address,
    port,
    kyma: o.kyma,
  });
  console.log(`klm ui: open ${server.url}  (Ctrl-C stops it)`);
  await new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void server.close().then(resolve));
  });
}

export function register(program: Command): void {
  withCluster(program.command('ui'))
    .description(
      "a web view of a Kyma's modules and the catalog: add, delete (blockers listed first), why; live; acts with your kubeconfig, on loopback",
    )
    .option('--kyma <namespace/name>', 'the Kyma the page opens with', DEFAULT_KYMA)
    .option(
      '--direct-namespace <ns>',
      "direct installs: the namespace of their objects that name none, and of klm's record of them",
      'kyma-system',
    )
    .option('--address <address>', 'where to listen (loopback unless you say otherwise)', '127.0.0.1')
    .option('--port <port>', 'the port (0: any free one)', '8090')
    .option(
      '--registry <host[/path]>',
      "direct installs: the OCI registry of the modules' components (default KLM_OCI_REGISTRY_HOST)",
    )
    .option('--temporal-ui <url>', "Temporal's web UI, for links to workflows", process.env.KLM_TEMPORAL_UI_URL)
    .action(serve);
}
