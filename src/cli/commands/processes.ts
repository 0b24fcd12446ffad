// `klm up`, `klm run`, `klm tools` and `klm bundle`: the processes and the servers they run on. Each loads
// what it runs when run (the local stack, the worker), so that no other command carries them.
import { Option, type Command } from 'commander';
import { configFromEnv } from '../../infra/config';
import type { Profile } from '../../localstack/tools';
import { UsageError } from '../output';

function profileOf(v: string | undefined): Profile {
  if (v === undefined || v === 'full' || v === 'minimal') return v ?? 'full';
  throw new UsageError(`unknown profile "${v}": use full or minimal`);
}

interface UpFlags {
  profile: string;
  dir?: string;
  fleet: string;
  kubeconfig?: string;
  temporalAddress?: string;
  temporalNamespace?: string;
}

async function up(o: UpFlags): Promise<void> {
  const external = o.kubeconfig || o.temporalAddress;
  if (external && (!o.kubeconfig || !o.temporalAddress))
    throw new UsageError('--kubeconfig and --temporal-address go together');
  const env = {
    ...process.env,
    ...(o.temporalNamespace ? { TEMPORAL_NAMESPACE: o.temporalNamespace } : {}),
    ...(o.temporalAddress ? { TEMPORAL_ADDRESS: o.temporalAddress } : {}),
  };
  const fleetSize = Number(o.fleet);
  if (!Number.isInteger(fleetSize) || fleetSize < 0)
    throw new UsageError(`--fleet needs a whole number, not "${o.fleet}"`);
  const { up } = await import('../up');
  await up({
    config: configFromEnv(env),
    profile: profileOf(o.profile),
    dir: o.dir,
    external: external ? { kubeconfig: o.kubeconfig! } : undefined,
    fleetSize,
  });
}

export function register(program: Command): void {
  program
    .command('up')
    .description(
      'the local stack (Kubernetes, Temporal and its UI, registry), worker, bridge, sample ' +
        'modules and a sample fleet; or worker and bridge against an existing cluster and Temporal',
    )
    .addOption(new Option('--profile <profile>', 'which servers').choices(['full', 'minimal']).default('full'))
    .option('--dir <dir>', "keep the stack's data and logs here")
    .option('--fleet <n>', 'sample Kymas to create', '5')
    .option('--kubeconfig <file>', 'an existing control plane (with --temporal-address)')
    .option('--temporal-address <host:port>', 'an existing Temporal (with --kubeconfig)')
    .option('--temporal-namespace <ns>', 'its namespace')
    .action(up);

  program
    .command('run')
    .description(
      'worker and bridge in one process, against the control plane and Temporal of the environment ' +
        '(KUBECONFIG, TEMPORAL_ADDRESS, KLM_*; the image runs this by default): for a fleet that fits ' +
        'one machine; scale out with the two Deployments instead',
    )
    .action(async () => {
      const { runInOneProcess } = await import('../run');
      await runInOneProcess(configFromEnv());
    });

  program
    .command('tools')
    .description('build the local servers into the cache and print their paths')
    .addOption(new Option('--profile <profile>', 'which servers').choices(['full', 'minimal']).default('full'))
    .option('--quiet', 'print nothing')
    .option('--browser', "also Debian's Chromium (the web view's browser tests)")
    .action(async (o: { profile: string; quiet?: boolean; browser?: boolean }) => {
      const { ensureTools } = await import('../../localstack/tools');
      const tools = await ensureTools(profileOf(o.profile), { browser: !!o.browser });
      if (!o.quiet) for (const [name, file] of Object.entries(tools)) console.log(`${name.padEnd(22)} ${file}`);
    });

  program
    .command('bundle')
    .description("bundle the workflows ahead of time (the worker's KLM_WORKFLOW_BUNDLE)")
    .requiredOption('--out <file>', 'where to write it')
    .action(async (o: { out: string }) => {
      const { writeWorkflowBundle } = await import('../../workers/worker');
      await writeWorkflowBundle(o.out);
      console.log(`workflow bundle written to ${o.out}: start the worker with KLM_WORKFLOW_BUNDLE=${o.out}`);
    });
}
