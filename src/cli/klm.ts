// klm: the operator's command line.
//   klm up                      start the local stack (Kubernetes, Temporal + UI, registry)
//   klm up --kubeconfig F --temporal-address H:P
//                               use an existing cluster and Temporal instead
//   klm tools [--profile P]     build the local servers into the cache and print their paths
import { parseArgs } from 'node:util';
import { Connection } from '@temporalio/client';
import { installCrds } from '../k8s/crds';
import { kubeConfigFromFile } from '../k8s/kubeconfig';
import { KubeClient } from '../k8s/rest-client';
import { startStack } from '../localstack/stack';
import { ensureTools, type Profile } from '../localstack/tools';
import { ensureSearchAttributes } from '../temporal/search-attributes';

const USAGE = `usage:
  klm up [--profile full|minimal] [--dir DIR]
  klm up --kubeconfig FILE --temporal-address HOST:PORT [--temporal-namespace NS]
  klm tools [--profile full|minimal]`;

function profileOf(v: string | undefined): Profile {
  if (v === undefined || v === 'full' || v === 'minimal') return v ?? 'full';
  throw new Error(`unknown profile "${v}": use full or minimal`);
}

function waitForSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, () => resolve(s));
  });
}

async function up(values: { profile?: string; dir?: string; kubeconfig?: string; 'temporal-address'?: string; 'temporal-namespace'?: string }): Promise<void> {
  if (values.kubeconfig || values['temporal-address']) {
    if (!values.kubeconfig || !values['temporal-address']) throw new Error('--kubeconfig and --temporal-address go together');
    const crds = await installCrds(await KubeClient.fromKubeConfig(kubeConfigFromFile(values.kubeconfig)));
    console.log(`CRDs installed: ${crds.join(', ')}`);
    const namespace = values['temporal-namespace'] ?? 'default';
    const connection = await Connection.connect({ address: values['temporal-address'] });
    try {
      await ensureSearchAttributes(connection, namespace);
    } finally {
      await connection.close();
    }
    console.log(`Temporal at ${values['temporal-address']} (namespace ${namespace}) has the Kyma search attributes.`);
    return;
  }
  const stack = await startStack({ profile: profileOf(values.profile), temporalUi: true, dir: values.dir });
  const { info } = stack;
  console.log('');
  console.log('The local control plane is up.');
  console.log(`  Temporal UI:      ${info.temporalUiUrl}`);
  console.log(`  Temporal address: ${info.temporalAddress} (namespace ${info.temporalNamespace})`);
  console.log(`  kubeconfig:       ${info.kubeconfig}`);
  console.log(`  kubectl:          ${info.tools.kubectl} --kubeconfig ${info.kubeconfig} get kymas -A`);
  console.log(`  OCI registry:     ${info.registryHost}`);
  console.log(`  logs and data:    ${info.dir}`);
  console.log('Press Ctrl-C to stop.');
  const signal = await waitForSignal();
  console.log(`\n${signal}: stopping the local stack ...`);
  await stack.stop();
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      profile: { type: 'string' },
      dir: { type: 'string' },
      kubeconfig: { type: 'string' },
      'temporal-address': { type: 'string' },
      'temporal-namespace': { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return;
  }
  switch (command) {
    case 'up':
      await up(values);
      return;
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
