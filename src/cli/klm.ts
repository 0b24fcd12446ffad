// klm: the command line, on commander. `klm --help` and `klm <command> --help` list everything;
// `klm completion bash|zsh` prints shell completion. Exit codes: src/cli/output.ts (EXIT).
// The commands that run servers (up, tools, bundle, ui) or ask Temporal (rollout, promote, kyma
// status) load what they need when run: the Temporal worker and client, the local stack and the
// web server are no part of a `klm module list` (the build puts them in chunks of their own).
import { createInterface } from 'node:readline/promises';
import { Argument, Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { CustomResourcePolicy, Kyma } from '../api/kyma';
import { API_VERSION, type KubeObject } from '../api/shared';
import type { Profile } from '../localstack/tools';
import { configFromEnv, durationMs } from '../infra/config';
import { Registries } from '../oci/registries';
import { dockerConfigCredentials } from './docker-credentials';
import { clusterClient, kymaRefOf, type ClusterOptions } from './cluster';
import { completionScript } from './completion';
import { listEntries, moduleTable, setManaged, whyText } from './kyma-modules';
import { communityEntries, catalog, catalogTable } from './module-catalog';
import { DEFAULT_COMMUNITY_CATALOG, pulledTemplates, readCommunityCatalog } from './community-catalog';
import { add, manage } from './module-add';
import { deleteModule } from './module-delete';
import { moduleRows, whyModule } from './module-list';
import { pull } from './module-pull';
import type { SourceOptions } from './module-source';
import { createModule, type CreateOptions } from './module-create';
import { checkPromotion, policyRefusal, promote } from './promote';
import { register as registerDeployment } from './deployment';
import { EXIT, NotRunningError, outputOf, Refused, render, UsageError, WaitTimeoutError } from './output';

/** Where upstream keeps the Kyma of a runtime; the control plane's are named with --kyma. */
const DEFAULT_KYMA = 'kyma-system/default';

function profileOf(v: string | undefined): Profile {
  if (v === undefined || v === 'full' || v === 'minimal') return v ?? 'full';
  throw new UsageError(`unknown profile "${v}": use full or minimal`);
}

interface ModuleCommandOptions extends ClusterOptions {
  kyma: string;
  output: string;
}

interface WaitOptions {
  wait?: boolean;
  timeout: string;
}

/** --timeout in milliseconds; a value that is no duration is a usage error. */
function timeoutOf(o: WaitOptions): number {
  try {
    return durationMs(o.timeout, 300_000);
  } catch (err) {
    throw new UsageError(`--timeout: ${(err as Error).message}`);
  }
}

function withCluster(c: Command): Command {
  return c
    .option('--kubeconfig <file>', 'the kubeconfig (default: KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--context <name>', 'the kubeconfig context (default: its current one)');
}

function withKyma(c: Command): Command {
  return withCluster(c).option('--kyma <namespace/name>', 'the Kyma whose modules these are', DEFAULT_KYMA);
}

function withOutput(c: Command): Command {
  return c.addOption(
    new Option('-o, --output <format>', 'table, json or yaml').default('table').choices(['table', 'json', 'yaml']),
  );
}

function withWait(c: Command): Command {
  return c
    .option('--wait', 'wait until the lifecycle manager has done it')
    .option('--timeout <duration>', 'how long --wait waits (30s, 5m, …)', '5m');
}

interface DirectOptions {
  directNamespace: string;
}

/** Where direct installs go (as the Kyma CLI: kyma-system by default). */
function withDirect(c: Command): Command {
  return c.option(
    '--direct-namespace <ns>',
    "direct installs: the namespace of their objects that name none, and of klm's record of them",
    'kyma-system',
  );
}

interface SourceFlags {
  registry?: string;
}

/** Where a direct install fetches a module's manifest when its template has no link. */
function withSources(c: Command): Command {
  return c.option(
    '--registry <host[/path]>',
    "direct installs: the OCI registry of the modules' components, for templates with descriptor {} (default KLM_OCI_REGISTRY_HOST)",
  );
}

function sourcesOf(o: SourceFlags): SourceOptions {
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

/** Progress of long waits goes to stderr, so that stdout stays what -o asked for. */
const progress = (line: string) => console.error(`klm: ${line}`);

async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export function program(): Command {
  const klm = new Command('klm')
    .description("the Kyma lifecycle manager on Temporal: run it, steer its rollouts, manage a Kyma's modules")
    .showHelpAfterError()
    .exitOverride();

  klm
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
    .action(
      async (o: {
        profile: string;
        dir?: string;
        fleet: string;
        kubeconfig?: string;
        temporalAddress?: string;
        temporalNamespace?: string;
      }) => {
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
        const { up } = await import('./up');
        await up({
          config: configFromEnv(env),
          profile: profileOf(o.profile),
          dir: o.dir,
          external: external ? { kubeconfig: o.kubeconfig! } : undefined,
          fleetSize,
        });
      },
    );

  klm
    .command('tools')
    .description('build the local servers into the cache and print their paths')
    .addOption(new Option('--profile <profile>', 'which servers').choices(['full', 'minimal']).default('full'))
    .option('--quiet', 'print nothing')
    .option('--browser', "also Debian's Chromium (the web view's browser tests)")
    .action(async (o: { profile: string; quiet?: boolean; browser?: boolean }) => {
      const { ensureTools } = await import('../localstack/tools');
      const tools = await ensureTools(profileOf(o.profile), { browser: !!o.browser });
      if (!o.quiet) for (const [name, file] of Object.entries(tools)) console.log(`${name.padEnd(22)} ${file}`);
    });

  klm
    .command('bundle')
    .description("bundle the workflows ahead of time (the worker's KLM_WORKFLOW_BUNDLE)")
    .requiredOption('--out <file>', 'where to write it')
    .action(async (o: { out: string }) => {
      const { writeWorkflowBundle } = await import('../workers/worker');
      await writeWorkflowBundle(o.out);
      console.log(`workflow bundle written to ${o.out}: start the worker with KLM_WORKFLOW_BUNDLE=${o.out}`);
    });

  registerDeployment(klm);

  const ro = klm
    .command('rollout')
    .description("a channel's rollout: its waves, the operator's steering, the plan of a promotion");
  const channelOf = (module: string, o: { channel: string; namespace: string }) => ({
    namespace: o.namespace,
    module,
    channel: o.channel,
  });
  for (const action of ['status', 'pause', 'resume', 'abort'] as const) {
    const c = ro
      .command(`${action} <module>`)
      .description(
        action === 'status'
          ? 'the rollout of the module on a channel, wave by wave'
          : `${action} the rollout (recorded with --reason)`,
      )
      .option('--channel <channel>', 'the channel', 'regular')
      .option('--namespace <ns>', 'the namespace of the ModuleReleaseMeta', 'kcp-system')
      .addOption(new Option('-o, --output <format>', 'table or json').default('table').choices(['table', 'json']));
    if (action !== 'status') c.requiredOption('--reason <why>', 'why (recorded with the rollout)');
    c.action(
      async (module: string, o: { channel: string; namespace: string; output: 'table' | 'json'; reason?: string }) => {
        const { rollout } = await import('./rollout');
        console.log(
          await rollout(
            {
              action: action,
              channel: channelOf(module, o),
              output: o.output,
              ...(o.reason ? { reason: o.reason } : {}),
            },
            configFromEnv(process.env),
          ),
        );
      },
    );
  }
  ro.command('plan <module>')
    .description(
      'the Kymas a promotion would move, wave by wave, and the objects it would add, change and remove (asks the worker; applies nothing)',
    )
    .requiredOption('--version <version>', 'the version the channel would move to')
    .option('--channel <channel>', 'the channel', 'regular')
    .option('--namespace <ns>', 'the namespace of the ModuleReleaseMeta', 'kcp-system')
    .addOption(new Option('-o, --output <format>', 'table or json').default('table').choices(['table', 'json']))
    .action(async (module: string, o: { version: string; channel: string; namespace: string; output: string }) => {
      const { planTable, rolloutPlan } = await import('./rollout');
      const plan = await rolloutPlan(channelOf(module, o), o.version, configFromEnv(process.env));
      console.log(o.output === 'json' ? JSON.stringify(plan, null, 2) : planTable(plan));
    });

  const mod = klm
    .command('module')
    .alias('modules')
    .description("a Kyma's modules: what is offered, what is installed, add, delete, manage");
  withOutput(withKyma(mod.command('catalog')))
    .description(
      "the modules the Kyma's namespace offers it (versions, channels, beta or internal; a " +
        'channel whose version cannot be installed is marked), the community modules pulled into ' +
        'the cluster, and those of a community catalog',
    )
    .option(
      '--community-catalog <file|url>',
      'a community catalog (the format of the Kyma community-modules index) to list too',
      process.env.KLM_COMMUNITY_CATALOG,
    )
    .option('--remote', `list the Kyma community-modules index too (${DEFAULT_COMMUNITY_CATALOG})`)
    .action(async (o: ModuleCommandOptions & { communityCatalog?: string; remote?: boolean }) => {
      const kube = await clusterClient(o);
      const ref = kymaRefOf(o.kyma);
      const kyma = await kube.get<Kyma & KubeObject>(API_VERSION, 'Kyma', ref.name, ref.namespace);
      if (!kyma)
        progress(
          `there is no Kyma ${o.kyma}: this is all the namespace offers, beta and internal modules included (name a Kyma with --kyma namespace/name)`,
        );
      const source = o.communityCatalog ?? (o.remote ? DEFAULT_COMMUNITY_CATALOG : undefined);
      const [managed, pulled, remote] = await Promise.all([
        catalog(kube, ref.namespace, kyma),
        pulledTemplates(kube, ref.namespace),
        source ? readCommunityCatalog(source) : [],
      ]);
      console.log(render(outputOf(o.output), [...managed, ...communityEntries(pulled, remote)], catalogTable));
    });
  withOutput(withDirect(withKyma(mod.command('list'))))
    .description(
      "the Kyma's modules and those klm installed directly: version (with its channel), CR policy, managed, the module's own status and the installation's",
    )
    .option(
      '--show-errors',
      "also say on stderr what could not be read (a cluster, a module's CR), which the list shows as Unknown",
    )
    .action(async (o: ModuleCommandOptions & DirectOptions & { showErrors?: boolean }) => {
      const kube = await clusterClient(o);
      const { rows, kyma } = await moduleRows(
        kube,
        kymaRefOf(o.kyma),
        o.directNamespace,
        o.showErrors ? (line) => console.error(`klm: error: ${line}`) : undefined,
      );
      if (!kyma)
        progress(
          `there is no Kyma ${o.kyma}: these are the modules klm installed directly (name a Kyma with --kyma namespace/name)`,
        );
      console.log(render(outputOf(o.output), listEntries(rows), moduleTable));
    });
  withSources(withDirect(withWait(withKyma(mod.command('add <module>')))))
    .description(
      'add the module to the Kyma (or change its channel, version or CR policy); or install it ' +
        'directly: a community module (namespace/template), a cluster without the Kyma, or ' +
        '--direct. As with the Kyma CLI, a module added without --default-config-cr (or --policy) ' +
        'gets the CR policy Ignore: no default CR',
    )
    .option('-c, --channel <channel>', "name of the Kyma channel to use for the module (default: the Kyma's)")
    .option('--version <version>', 'a version to pin instead of following a channel')
    .addOption(
      new Option('--policy <policy>', 'whether the default CR is created (and deleted with the module)').choices([
        'CreateAndDelete',
        'Ignore',
      ]),
    )
    .addOption(
      new Option(
        '--default-config-cr',
        'deploy the module with its default CR, the policy CreateAndDelete (alias: --default-cr)',
      ).conflicts(['policy', 'defaultCr', 'configCrPath', 'crPath']),
    )
    .addOption(new Option('--default-cr').hideHelp().conflicts(['policy', 'configCrPath', 'crPath']))
    .addOption(
      new Option(
        '--config-cr-path <file>',
        "the module's CR from this file instead of the default one, applied once the module runs; the policy Ignore (alias: --cr-path)",
      ).conflicts(['policy', 'crPath']),
    )
    .addOption(new Option('--cr-path <file>').hideHelp().conflicts(['policy']))
    .option('--auto-approve', 'install a community module without asking')
    .option(
      '--direct',
      'install it directly beside the Kyma: the lifecycle manager will not upgrade, repair or support it',
    )
    .action(
      async (
        module: string,
        o: ModuleCommandOptions &
          WaitOptions &
          DirectOptions &
          SourceFlags & {
            channel?: string;
            version?: string;
            policy?: CustomResourcePolicy;
            defaultConfigCr?: boolean;
            defaultCr?: boolean;
            configCrPath?: string;
            crPath?: string;
            autoApprove?: boolean;
            direct?: boolean;
          },
      ) => {
        const kube = await clusterClient(o);
        const policy = o.defaultConfigCr || o.defaultCr ? 'CreateAndDelete' : o.policy;
        const crPath = o.configCrPath ?? o.crPath;
        await add(kube, {
          module,
          ref: kymaRefOf(o.kyma),
          ...(o.channel ? { channel: o.channel } : {}),
          ...(o.version ? { version: o.version } : {}),
          ...(policy ? { policy } : {}),
          newPolicy: 'Ignore',
          ...(crPath ? { crPath } : {}),
          ...(o.direct ? { direct: true } : {}),
          ...(o.autoApprove ? {} : { approve: confirm }),
          directNamespace: o.directNamespace,
          sources: () => sourcesOf(o),
          wait: !!o.wait,
          timeoutMs: timeoutOf(o),
          crdTimeoutMs: configFromEnv(process.env).settings.crdEstablishedTimeoutMs,
          say: (line) => console.log(line),
          progress,
        });
      },
    );
  withDirect(withWait(withKyma(mod.command('delete <module>').alias('del'))))
    .description(
      'remove the module from the Kyma, or delete its direct install; refused while resources of ' +
        "the module's kinds that people made exist, unless --delete-resources",
    )
    .option('--delete-resources', 'delete those resources first (asks for confirmation)')
    .option('--auto-approve', 'do not ask (for scripts)')
    .action(
      async (
        module: string,
        o: ModuleCommandOptions & WaitOptions & DirectOptions & { deleteResources?: boolean; autoApprove?: boolean },
      ) => {
        const kube = await clusterClient(o);
        await deleteModule(kube, {
          module,
          ref: kymaRefOf(o.kyma),
          directNamespace: o.directNamespace,
          ...(o.deleteResources ? { deleteResources: true } : {}),
          ...(o.autoApprove ? { autoApprove: true } : {}),
          wait: !!o.wait,
          timeoutMs: timeoutOf(o),
          confirm,
          say: (line) => console.log(line),
          progress,
        });
      },
    );
  withCluster(mod.command('pull <module>'))
    .description(
      "bring a community module's ModuleTemplate from the community catalog into the cluster; `klm module add <namespace>/<template>` then installs it",
    )
    .option('-n, --namespace <ns>', 'where the template goes (not kyma-system)', 'default')
    .option('-v, --version <version>', 'the version (default: the highest)')
    .option(
      '--community-catalog <file|url>',
      'the community catalog',
      process.env.KLM_COMMUNITY_CATALOG ?? DEFAULT_COMMUNITY_CATALOG,
    )
    .option('--force', 'replace a template of that name that differs')
    .action(
      async (
        module: string,
        o: ClusterOptions & { namespace: string; version?: string; communityCatalog: string; force?: boolean },
      ) => {
        const kube = await clusterClient(o);
        console.log(
          await pull(kube, {
            module,
            namespace: o.namespace,
            ...(o.version ? { version: o.version } : {}),
            ...(o.force ? { force: true } : {}),
            catalog: await readCommunityCatalog(o.communityCatalog),
            source: o.communityCatalog,
          }),
        );
      },
    );
  withDirect(withKyma(mod.command('manage <module>')))
    .description(
      'let the lifecycle manager reconcile the module again, with the CR policy --policy; a module the Kyma lacks is added to it (as the Kyma CLI does)',
    )
    .addOption(
      new Option('--policy <policy>', 'the CR policy: whether the default CR is created (and deleted with the module)')
        .choices(['CreateAndDelete', 'Ignore'])
        .default('CreateAndDelete'),
    )
    .action(async (module: string, o: ModuleCommandOptions & DirectOptions & { policy: CustomResourcePolicy }) => {
      console.log(
        await manage(await clusterClient(o), {
          module,
          ref: kymaRefOf(o.kyma),
          policy: o.policy,
          directNamespace: o.directNamespace,
        }),
      );
    });
  withKyma(mod.command('unmanage <module>'))
    .description('stop reconciling the module; its objects keep running')
    .action(async (module: string, o: ModuleCommandOptions) => {
      console.log(await setManaged(await clusterClient(o), kymaRefOf(o.kyma), module, false));
    });
  withOutput(withDirect(withKyma(mod.command('why <module>'))))
    .description(
      "why the module is where it is: state, reason and message, versions, its last Events, its workflow in Temporal's UI",
    )
    .option('--temporal-ui <url>', "Temporal's web UI, for a link to the workflow", process.env.KLM_TEMPORAL_UI_URL)
    .action(async (module: string, o: ModuleCommandOptions & DirectOptions & { temporalUi?: string }) => {
      const kube = await clusterClient(o);
      console.log(
        render(
          outputOf(o.output),
          await whyModule(
            kube,
            kymaRefOf(o.kyma),
            module,
            o.directNamespace,
            o.temporalUi,
            process.env.TEMPORAL_NAMESPACE,
          ),
          whyText,
        ),
      );
    });

  withCluster(mod.command('promote <module> <version>'))
    .description(
      'move a channel of the module to a version (its ModuleReleaseMeta), after showing the plan of the rollout that starts and asking',
    )
    .requiredOption('--channel <channel>', 'the channel to move')
    .option('--namespace <ns>', 'the namespace of the ModuleReleaseMeta', 'kcp-system')
    .option('--auto-approve', 'do not ask (for scripts)')
    .option(
      '--force',
      'move the channel although its rollout policy cannot be used (the rollout then halts until the policy is fixed and it is resumed)',
    )
    .action(
      async (
        module: string,
        version: string,
        o: ClusterOptions & { channel: string; namespace: string; autoApprove?: boolean; force?: boolean },
      ) => {
        const kube = await clusterClient(o);
        const p = { namespace: o.namespace, module, channel: o.channel, version };
        const { meta, from } = await checkPromotion(kube, p);
        if (from === version) {
          console.log(`channel ${o.channel} of module ${module} carries ${version} already: nothing to do`);
          return;
        }
        const { planTable, rolloutPlan } = await import('./rollout');
        const plan = await rolloutPlan(
          { namespace: o.namespace, module, channel: o.channel },
          version,
          configFromEnv(process.env),
        );
        const refusal = policyRefusal(p, plan);
        if (refusal && !o.force) throw new Refused(refusal);
        if (refusal)
          progress(
            `warning: --force: moving the channel although its rollout policy cannot be used; the ` +
              `rollout halts at once until the policy is fixed and it is resumed (klm rollout resume ` +
              `${module} --channel ${o.channel} --namespace ${o.namespace} --reason …)`,
          );
        console.log(
          `channel ${o.channel} of module ${module} in ${o.namespace}: ${from ?? 'no version yet'} → ${version}; the plan of the rollout this starts:`,
        );
        console.log(planTable(plan));
        if (!o.autoApprove && !(await confirm(`promote ${module} on ${o.channel} to ${version}?`)))
          throw new Refused('not confirmed: nothing promoted (--auto-approve skips the question)');
        await promote(kube, p, meta);
        console.log(
          `channel ${o.channel} of module ${module} now carries ` +
            `${version}${from ? ` (was ${from})` : ''}; \`klm rollout status ${module} --channel ` +
            `${o.channel} --namespace ${o.namespace}\` follows its rollout`,
        );
      },
    );

  mod
    .command('create')
    .description(
      "module authors: write a module version's ModuleTemplate (modulectl's module-config.yaml) " +
        'and, with --output-constructor-file, the component constructor the OCM CLI pushes, as ' +
        "modulectl 3.2.0 does; with --registry, push the OCM component too (klm's own: modulectl " +
        '3.1 was the last modulectl that pushed)',
    )
    .option('-c, --config-file <file>', "the module config, in modulectl's format", 'module-config.yaml')
    .option('-o, --output <file>', 'where to write the ModuleTemplate', 'template.yaml')
    .option(
      '--output-constructor-file <file>',
      'write the component constructor for the OCM CLI there (modulectl 3.2.0 writes component-constructor.yaml always)',
    )
    .option(
      '--module-sources-git-directory <dir>',
      "the module sources' git repository: its checked-out commit is the constructor's git source",
      '.',
    )
    .option(
      '--skip-version-validation [bool]',
      "modulectl 3.2.0's: =false checks that the manager's image is tagged with the module's version",
      (v: string) => {
        if (v !== 'true' && v !== 'false') throw new InvalidArgumentError('give true or false');
        return v === 'true';
      },
      true,
    )
    .option(
      '--registry <host[:port][/subpath]>',
      "push the component to this OCI registry (klm's own; required unless --output-constructor-file or --dry-run)",
    )
    .option('--insecure', 'allow plain HTTP to a registry that is not on this machine')
    .addOption(
      new Option('--registry-credentials <user:password>', 'credentials to push with').env('KLM_REGISTRY_CREDENTIALS'),
    )
    .addOption(
      new Option('--registry-ca-file <file>', "a PEM bundle of CAs the registry's certificate chains to").env(
        'KLM_REGISTRY_CA_FILE',
      ),
    )
    .option('--overwrite', 'replace the version if the registry has it already')
    .option('--namespace <ns>', 'metadata.namespace of the ModuleTemplate (modulectl writes "")', '')
    .option('--dry-run', 'validate and write the ModuleTemplate; push nothing')
    .action(async (o: CreateOptions) => {
      console.log(await createModule(o, progress));
    });

  withCluster(klm.command('ui'))
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
    .action(
      async (
        o: ClusterOptions &
          DirectOptions &
          SourceFlags & { kyma: string; address: string; port: string; temporalUi?: string },
      ) => {
        const port = Number(o.port);
        if (!Number.isInteger(port) || port < 0 || port > 65535)
          throw new UsageError(`--port needs a port number, not "${o.port}"`);
        kymaRefOf(o.kyma);
        const kube = await clusterClient(o);
        const { startUi } = await import('./ui/server');
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
          for (const signal of ['SIGINT', 'SIGTERM'] as const)
            process.once(signal, () => void server.close().then(resolve));
        });
      },
    );

  const ky = klm.command('kyma').description("the control plane's Kymas, as operators look at them");
  withOutput(withCluster(ky.command('status <kyma>')))
    .description(
      'a Kyma (namespace/name): its state and conditions, its modules, whether its workflow runs ' +
        'in Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE; exit 4 when it does not)',
    )
    .option('--temporal-ui <url>', "Temporal's web UI, for a link to the workflow", process.env.KLM_TEMPORAL_UI_URL)
    .action(async (kyma: string, o: ClusterOptions & { output: string; temporalUi?: string }) => {
      const kube = await clusterClient(o);
      const { kymaStatus, kymaStatusText, notRunning } = await import('./kyma-status');
      const view = await kymaStatus(kube, kymaRefOf(kyma, 'the Kyma'), configFromEnv(process.env), o.temporalUi);
      console.log(render(outputOf(o.output), view, kymaStatusText));
      const gone = notRunning(view);
      if (gone) throw gone;
    });

  klm
    .command('completion')
    .description('shell completion: eval "$(klm completion bash)" (or zsh)')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      console.log(completionScript(klm, shell));
    });
  return klm;
}

/** Runs klm with `argv`; resolves to its exit code. */
export async function run(argv: string[]): Promise<number> {
  try {
    await program().parseAsync(argv, { from: 'user' });
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    console.error(`klm: ${err instanceof Error ? err.message : String(err)}`);
    if (err instanceof UsageError) return EXIT.usage;
    if (err instanceof WaitTimeoutError) return EXIT.timeout;
    if (err instanceof NotRunningError) return EXIT.notRunning;
    return EXIT.failed;
  }
}

void run(process.argv.slice(2)).then((code) => process.exit(code));
