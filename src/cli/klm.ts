// klm: the operator's command line.
//   klm up                      the local stack (Kubernetes, Temporal + UI, registry), worker,
//                               bridge, sample modules and a sample fleet
//   klm up --kubeconfig F --temporal-address H:P
//                               worker and bridge against an existing cluster and Temporal
//   klm tools [--profile P]     build the local servers into the cache and print their paths
//   klm bundle --out FILE       bundle the workflows ahead of time (the worker's KLM_WORKFLOW_BUNDLE)
//   klm rollout status|pause|resume|abort MODULE [--channel C] [--namespace NS] [--reason R] [-o json]
//                               a channel's rollout: its waves, and the operator's steering
//   klm rollout plan MODULE --version V [--channel C] [--namespace NS] [-o json]
//                               the Kymas a promotion would move, wave by wave, and the objects
//                               it would add, change and remove (asks the worker; applies nothing)
import { parseArgs } from 'node:util';
import { ensureTools, type Profile } from '../localstack/tools';
import { configFromEnv } from '../infra/config';
import { writeWorkflowBundle } from '../workers/worker';
import { planTable, rollout, rolloutPlan, type RolloutAction } from './rollout';
import { up } from './up';

const USAGE = `usage:
  klm up [--profile full|minimal] [--dir DIR] [--fleet N]
  klm up --kubeconfig FILE --temporal-address HOST:PORT [--temporal-namespace NS]
  klm tools [--profile full|minimal]
  klm bundle --out FILE
  klm rollout status MODULE [--channel regular] [--namespace kcp-system] [-o table|json]
  klm rollout pause|resume|abort MODULE --reason "why" [--channel regular] [--namespace kcp-system]
  klm rollout plan MODULE --version V [--channel regular] [--namespace kcp-system] [-o table|json]
Environment: TEMPORAL_NAMESPACE, KLM_TASK_QUEUE, KLM_DRIFT_INTERVAL, KLM_CRD_ESTABLISHED_TIMEOUT,
KLM_INSTALL_RETRY, KLM_DEFAULT_NAMESPACE, KLM_MAX_HISTORY_EVENTS, KLM_CACHE_DIR (see README).`;

function profileOf(v: string | undefined): Profile {
  if (v === undefined || v === 'full' || v === 'minimal') return v ?? 'full';
  throw new Error(`unknown profile "${v}": use full or minimal`);
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      profile: { type: 'string' },
      dir: { type: 'string' },
      fleet: { type: 'string' },
      kubeconfig: { type: 'string' },
      'temporal-address': { type: 'string' },
      'temporal-namespace': { type: 'string' },
      quiet: { type: 'boolean' },
      out: { type: 'string' },
      channel: { type: 'string' },
      namespace: { type: 'string' },
      reason: { type: 'string' },
      version: { type: 'string' },
      output: { type: 'string', short: 'o' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  switch (command) {
    case 'up': {
      const external = values.kubeconfig || values['temporal-address'];
      if (external && (!values.kubeconfig || !values['temporal-address'])) throw new Error('--kubeconfig and --temporal-address go together');
      const env = { ...process.env, ...(values['temporal-namespace'] ? { TEMPORAL_NAMESPACE: values['temporal-namespace'] } : {}), ...(values['temporal-address'] ? { TEMPORAL_ADDRESS: values['temporal-address'] } : {}) };
      const fleetSize = Number(values.fleet ?? 5);
      if (!Number.isInteger(fleetSize) || fleetSize < 0) throw new Error(`--fleet needs a whole number, not "${values.fleet}"`);
      await up({
        config: configFromEnv(env),
        profile: profileOf(values.profile),
        dir: values.dir,
        external: external ? { kubeconfig: values.kubeconfig! } : undefined,
        fleetSize,
      });
      return;
    }
    case 'bundle': {
      if (!values.out) throw new Error('klm bundle needs --out FILE');
      await writeWorkflowBundle(values.out);
      console.log(`workflow bundle written to ${values.out}: start the worker with KLM_WORKFLOW_BUNDLE=${values.out}`);
      return;
    }
    case 'rollout': {
      const [, action, module] = positionals;
      if (!['status', 'pause', 'resume', 'abort', 'plan'].includes(action ?? '') || !module) throw new Error(`klm rollout needs an action (status, pause, resume, abort, plan) and a module\n${USAGE}`);
      const output = values.output ?? 'table';
      if (output !== 'table' && output !== 'json') throw new Error(`unknown output "${output}": use table or json`);
      const channel = { namespace: values.namespace ?? 'kcp-system', module, channel: values.channel ?? 'regular' };
      if (action === 'plan') {
        if (!values.version) throw new Error('klm rollout plan needs --version V: the version the channel would move to');
        const plan = await rolloutPlan(channel, values.version, configFromEnv(process.env));
        console.log(output === 'json' ? JSON.stringify(plan, null, 2) : planTable(plan));
        return;
      }
      console.log(await rollout({ action: action as RolloutAction, channel, output, ...(values.reason ? { reason: values.reason } : {}) }, configFromEnv(process.env)));
      return;
    }
    case 'tools': {
      const tools = await ensureTools(profileOf(values.profile));
      if (!values.quiet) for (const [name, file] of Object.entries(tools)) console.log(`${name.padEnd(22)} ${file}`);
      return;
    }
    default:
      throw new Error(`unknown command "${command}"\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`klm: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
