// `klm kyma`: the control plane's Kymas, as operators look at them. `kyma status` asks Temporal,
// whose client loads when it runs (../kyma-status.ts).
import type { Command } from 'commander';
import { configFromEnv } from '../../infra/config';
import { clusterClient, kymaRefOf, type ClusterOptions } from '../cluster';
import { outputOf, render } from '../output';
import { withCluster, withOutput } from './options';

export function register(program: Command): void {
  const ky = program.command('kyma').description("the control plane's Kymas, as operators look at them");
  withOutput(withCluster(ky.command('status <kyma>')))
    .description(
      'a Kyma (namespace/name): its state and conditions, its modules, whether its workflow runs ' +
        'in Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE; exit 4 when it does not)',
    )
    .option('--temporal-ui <url>', "Temporal's web UI, for a link to the workflow", process.env.KLM_TEMPORAL_UI_URL)
    .action(async (kyma: string, o: ClusterOptions & { output: string; temporalUi?: string }) => {
      const kube = await clusterClient(o);
      const { kymaStatus, kymaStatusText, notRunning } = await import('../kyma-status');
      const view = await kymaStatus(kube, kymaRefOf(kyma, 'the Kyma'), configFromEnv(process.env), o.temporalUi);
      console.log(render(outputOf(o.output), view, kymaStatusText));
      const gone = notRunning(view);
      if (gone) throw gone;
    });
}
