// klm's program (./klm.ts runs it), on commander. `klm --help` and `klm <command> --help` list everything;
// `klm completion bash|zsh|fish|powershell` prints shell completion. Exit codes: src/cli/output.ts
// (EXIT). A group of commands run without one (`klm`, `klm module`) prints its help and exits 0,
// as the Kyma CLI's (cobra's) groups do; the Kyma CLI's global flags are accepted everywhere.
// Each command group is a file of ./commands/ whose `register(program)` adds its commands (the
// options several groups share: ./commands/options.ts); a new group is one more such file and
// one more line below, in the order `klm --help` lists the groups.
// The commands that run servers (up, tools, bundle, ui) or ask Temporal (rollout, promote, kyma
// status) load what they need when run: the Temporal worker and client, the local stack and the
// web server are no part of a `klm module list` (the build puts them in chunks of their own).
import { Command, CommanderError, Option } from 'commander';
import * as completion from './commands/completion';
import * as deployment from './commands/deployment';
import * as kyma from './commands/kyma';
import * as modules from './commands/module';
import * as processes from './commands/processes';
import * as rollout from './commands/rollout';
import * as ui from './commands/ui';
import { debugDetails, debugOn, EXIT, NotRunningError, setDebug, UsageError, WaitTimeoutError } from './output';

const NO_EXTENSIONS =
  "no effect: klm has no CLI extensions (accepted so that the Kyma CLI's command lines run unchanged)";

/**
 * The Kyma CLI's persistent flags, on every command (commander takes a program's options after
 * its subcommands too; each command's help lists them under Global Options).
 */
function globalOptions(klm: Command): void {
  klm
    .option(
      '--debug',
      'also print on stderr what could not be read (as list --show-errors) and, with an error, its causes and stack',
    )
    .addOption(new Option('--skip-extensions', NO_EXTENSIONS))
    .addOption(new Option('--show-extensions-error', NO_EXTENSIONS));
}

/**
 * A command with subcommands is a group: run without one it prints its help on stdout and exits
 * 0, as cobra does for the Kyma CLI's; a word that names none of its commands is an error.
 */
function groupsPrintHelp(c: Command): void {
  for (const s of c.commands) groupsPrintHelp(s);
  if (!c.commands.length) return;
  c.allowExcessArguments().action((_opts: unknown, self: Command) => {
    if (self.args.length) self.error(`error: unknown command '${self.args[0]}'`, { code: 'commander.unknownCommand' });
    self.outputHelp();
  });
}

export function program(): Command {
  const klm = new Command('klm')
    .description("the Kyma lifecycle manager on Temporal: run it, steer its rollouts, manage a Kyma's modules")
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError()
    .exitOverride();
  globalOptions(klm);
  klm.hook('preAction', (root) => setDebug(!!root.opts<{ debug?: boolean }>().debug));
  for (const group of [processes, rollout, deployment, modules, ui, kyma, completion]) group.register(klm);
  groupsPrintHelp(klm);
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
    if (debugOn()) for (const line of debugDetails(err)) console.error(`klm: debug: ${line}`);
    if (err instanceof UsageError) return EXIT.usage;
    if (err instanceof WaitTimeoutError) return EXIT.timeout;
    if (err instanceof NotRunningError) return EXIT.notRunning;
    return EXIT.failed;
  }
}
