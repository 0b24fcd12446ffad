// `klm module` (alias `modules`): a Kyma's modules: what is offered, what is installed; add,
// delete, pull, manage, unmanage, why; a channel's promotion; and, for module authors, create.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CustomResourcePolicy, Kyma } from '../../api/kyma';
import { API_VERSION, type KubeObject } from '../../api/shared';
import { configFromEnv } from '../../infra/config';
import { clusterClient, kymaRefOf, type ClusterOptions } from '../cluster';
import { DEFAULT_COMMUNITY_CATALOG, pulledTemplates, readCommunityCatalog } from '../community-catalog';
import { whyText } from '../kyma-module-why';
import { listEntries, moduleTable, setManaged } from '../kyma-modules';
import { add, manage } from '../module-add';
import { catalog, catalogTable, communityEntries, withKymaCliFields } from '../module-catalog';
import { createModule, type CreateOptions } from '../module-create';
import { deleteModule } from '../module-delete';
import { moduleRows, whyModule } from '../module-list';
import { pull } from '../module-pull';
import { debugLine, debugOn, outputOf, Refused, render } from '../output';
import { checkPromotion, policyRefusal, promote } from '../promote';
import {
  sourcesOf,
  timeoutOf,
  withCluster,
  withDirect,
  withKyma,
  withOutput,
  withSources,
  withWait,
  type DirectOptions,
  type ModuleCommandOptions,
  type SourceFlags,
  type WaitOptions,
} from './options';
import { confirm, progress } from './terminal';

function registerCatalog(mod: Command): void {
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
      console.log(
        render(outputOf(o.output), withKymaCliFields([...managed, ...communityEntries(pulled, remote)]), catalogTable),
      );
    });
}

function registerList(mod: Command): void {
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
        o.showErrors
          ? (line) => console.error(`klm: error: ${line}`)
          : debugOn()
            ? (line) => debugLine(line)
            : undefined,
      );
      if (!kyma)
        progress(
          `there is no Kyma ${o.kyma}: these are the modules klm installed directly (name a Kyma with --kyma namespace/name)`,
        );
      console.log(render(outputOf(o.output), listEntries(rows), moduleTable));
    });
}

type AddFlags = ModuleCommandOptions &
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
  };

async function addModule(module: string, o: AddFlags): Promise<void> {
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
}

function registerAdd(mod: Command): void {
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
    .action(addModule);
}

function registerDelete(mod: Command): void {
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
}

function registerPull(mod: Command): void {
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
}

function registerManaged(mod: Command): void {
  withDirect(withKyma(mod.command('manage <module>')))
    .description(
      'let the lifecycle manager reconcile the module again, with the CR policy --policy. A module ' +
        'the Kyma lacks is taken over only when its manager already runs in the cluster (its ' +
        "template's spec.manager) at the version the Kyma's channel carries, as the Kyma CLI does; " +
        'otherwise it is refused (`klm module add` installs a module)',
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
}

function registerWhy(mod: Command): void {
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
}

type PromoteFlags = ClusterOptions & { channel: string; namespace: string; autoApprove?: boolean; force?: boolean };

/** Shows the plan of the rollout a promotion starts, asks, and moves the channel. */
async function promoteModule(module: string, version: string, o: PromoteFlags): Promise<void> {
  const kube = await clusterClient(o);
  const p = { namespace: o.namespace, module, channel: o.channel, version };
  const { meta, from } = await checkPromotion(kube, p);
  if (from === version) {
    console.log(`channel ${o.channel} of module ${module} carries ${version} already: nothing to do`);
    return;
  }
  const { planTable, rolloutPlan } = await import('../rollout');
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
}

function registerPromote(mod: Command): void {
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
    .action(promoteModule);
}

function registerCreate(mod: Command): void {
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
}

export function register(program: Command): void {
  const mod = program
    .command('module')
    .alias('modules')
    .description("a Kyma's modules: what is offered, what is installed, add, delete, manage");
  registerCatalog(mod);
  registerList(mod);
  registerAdd(mod);
  registerDelete(mod);
  registerPull(mod);
  registerManaged(mod);
  registerWhy(mod);
  registerPromote(mod);
  registerCreate(mod);
}
