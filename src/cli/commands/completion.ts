// `klm completion bash|zsh`: shell completion for the whole program (../completion.ts writes it).
import { Argument, type Command } from 'commander';
import { completionScript } from '../completion';

export function register(program: Command): void {
  program
    .command('completion')
    .description('shell completion: eval "$(klm completion bash)" (or zsh)')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      console.log(completionScript(program, shell));
    });
}
