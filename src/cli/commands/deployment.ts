// `klm deployment`: the workers' Temporal Worker Deployment (docs/operator/upgrading.md). `status` lists
// its versions (current, ramping, draining, drained) with the runs still pinned to each, which
// tells when an old version's workers may stop; `current` and `ramp` move new runs by hand, for
// KLM_VERSION_PROMOTION=manual (or to roll back). The Temporal client loads when a command runs.
import { Option, type Command } from 'commander';
import { configFromEnv } from '../../infra/config';
import { outputOf, Refused } from '../output';

export function register(program: Command): void {
  const dep = program
    .command('deployment')
    .description("the workers' Temporal Worker Deployment: versions, which one new runs start on, draining");
  dep
    .command('status')
    .description('each version: current, ramping, draining or drained, and the runs still pinned to it')
    .addOption(new Option('-o, --output <format>', 'table or json').default('table').choices(['table', 'json']))
    .action(async (o: { output: string }) => {
      const { deploymentStatus } = await import('../deployment-versions');
      console.log(await deploymentStatus(configFromEnv(process.env), outputOf(o.output)));
    });
  dep
    .command('current <build-id>')
    .description('make a version current: new runs start on it, Kyma runs move to it at their next continue-as-new')
    .action(async (buildId: string) => {
      const config = configFromEnv(process.env);
      const { makeCurrent } = await import('../deployment-versions');
      await makeCurrent(config, buildId);
      console.log(`version ${buildId} of ${config.deployment.name} is current`);
    });
  dep
    .command('ramp [build-id] [percentage]')
    .description(
      'start that share of new runs (and of Kyma runs that continue as new) on a version; --clear ends the ramp',
    )
    .option('--clear', 'no version is ramped')
    .action(async (buildId: string | undefined, percentage: string | undefined, o: { clear?: boolean }) => {
      const config = configFromEnv(process.env);
      const share = Number(percentage);
      if (!o.clear && (!buildId || !(share >= 0 && share <= 100)))
        throw new Refused('give a build id and a percentage from 0 to 100, or --clear');
      const { ramp } = await import('../deployment-versions');
      await ramp(config, o.clear ? { percentage: 0 } : { buildId: buildId!, percentage: share });
      console.log(
        o.clear ? `no version of ${config.deployment.name} is ramped` : `version ${buildId} ramped to ${share}%`,
      );
    });
}
