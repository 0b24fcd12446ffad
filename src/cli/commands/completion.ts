// `klm completion bash|zsh|fish|powershell`: shell completion for the whole program
// (../completion.ts writes it), the shells cobra completes for the Kyma CLI. Without a shell it
// prints its help and exits 0, as `kyma completion` does.
import { Argument, type Command } from 'commander';
import { completionScript, SHELLS, type Shell } from '../completion';

export function register(program: Command): void {
  program
    .command('completion')
    .description(
      'shell completion: eval "$(klm completion bash)" (or zsh); klm completion fish | source; ' +
        'klm completion powershell | Out-String | Invoke-Expression',
    )
    .addArgument(new Argument('[shell]', SHELLS.join(', ')).choices(SHELLS))
    .option('--no-descriptions', 'fish, powershell: offer the words without their descriptions')
    .action((shell: Shell | undefined, o: { descriptions: boolean }, self: Command) => {
      if (!shell) self.outputHelp();
      else console.log(completionScript(program, shell, o.descriptions));
    });
}
