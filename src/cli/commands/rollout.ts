// `klm rollout`: a channel's rollout: its status, the operator's steering, the plan of a
// promotion. They ask Temporal, whose client loads when one runs (../rollout.ts).
import { Option, type Command } from 'commander';
import { configFromEnv } from '../../infra/config';

interface ChannelFlags {
  channel: string;
  namespace: string;
}

const channelOf = (module: string, o: ChannelFlags) => ({ namespace: o.namespace, module, channel: o.channel });

/** `rollout status|pause|resume|abort <module>`. */
function registerSteering(ro: Command, action: 'status' | 'pause' | 'resume' | 'abort'): void {
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
  c.action(async (module: string, o: ChannelFlags & { output: 'table' | 'json'; reason?: string }) => {
    const { rollout } = await import('../rollout');
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
  });
}

export function register(program: Command): void {
  const ro = program
    .command('rollout')
    .description("a channel's rollout: its waves, the operator's steering, the plan of a promotion");
  for (const action of ['status', 'pause', 'resume', 'abort'] as const) registerSteering(ro, action);
  ro.command('plan <module>')
    .description(
      'the Kymas a promotion would move, wave by wave, and the objects it would add, change and remove (asks the worker; applies nothing)',
    )
    .requiredOption('--version <version>', 'the version the channel would move to')
    .option('--channel <channel>', 'the channel', 'regular')
    .option('--namespace <ns>', 'the namespace of the ModuleReleaseMeta', 'kcp-system')
    .addOption(new Option('-o, --output <format>', 'table or json').default('table').choices(['table', 'json']))
    .action(async (module: string, o: ChannelFlags & { version: string; output: string }) => {
      const { planTable, rolloutPlan } = await import('../rollout');
      const plan = await rolloutPlan(channelOf(module, o), o.version, configFromEnv(process.env));
      console.log(o.output === 'json' ? JSON.stringify(plan, null, 2) : planTable(plan));
    });
}
