// klm: the command line, on commander. `klm --help` and `klm <command> --help` list everything;
// `klm completion bash|zsh` prints shell completion. Exit codes: src/cli/output.ts (EXIT).
// Each command group is a file of ./commands/ whose `register(program)` adds its commands (the
// options several groups share: ./commands/options.ts); a new group is one more such file and
// one more line below, in the order `klm --help` lists the groups.
// The commands that run servers (up, tools, bundle, ui) or ask Temporal (rollout, promote, kyma
// status) load what they need when run: the Temporal worker and client, the local stack and the
// web server are no part of a `klm module list` (the build puts them in chunks of their own).
import { Command, CommanderError } from 'commander';
import * as completion from './commands/completion';
import * as deployment from './commands/deployment';
import * as kyma from './commands/kyma';
import * as modules from './commands/module';
import * as processes from './commands/processes';
import * as rollout from './commands/rollout';
import * as ui from './commands/ui';
import { EXIT, NotRunningError, UsageError, WaitTimeoutError } from './output';

export function program(): Command {
  const klm = new Command('klm')
    .description("the Kyma lifecycle manager on Temporal: run it, steer its rollouts, manage a Kyma's modules")
    .showHelpAfterError()
    .exitOverride();
  for (const group of [processes, rollout, deployment, modules, ui, kyma, completion]) group.register(klm);
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
