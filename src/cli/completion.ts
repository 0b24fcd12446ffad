// Shell completion for klm, written from commander's own tree of commands and options, so that
// it never lags behind them. commander has none of its own; the script is plain bash (zsh runs it
// through bashcompinit).
import type { Command } from 'commander';

interface Path {
  words: string;
  completions: string[];
}

function walk(c: Command, prefix: string[], out: Path[]): void {
  const subcommands = c.commands.map((s) => s.name());
  // Hidden options are old spellings kept for scripts: not offered.
  const options = c.options
    .filter((o) => !o.hidden)
    .flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
  out.push({ words: prefix.join(' '), completions: [...subcommands, ...options, '--help'] });
  // A command typed by its alias (`klm modules`, `module del`) completes as by its name.
  for (const s of c.commands) for (const name of [s.name(), ...s.aliases()]) walk(s, [...prefix, name], out);
}

export function completionScript(root: Command, shell: 'bash' | 'zsh'): string {
  const paths: Path[] = [];
  walk(root, [], paths);
  // Deepest first: "module add <name>" must match "module add", not "module".
  paths.sort((a, b) => b.words.split(' ').length - a.words.split(' ').length || b.words.length - a.words.length);
  const cases = paths
    .map(
      (p) => `    ${JSON.stringify(p.words)}${p.words ? '*' : ''}) opts=${JSON.stringify(p.completions.join(' '))} ;;`,
    )
    .join('\n');
  const fn = `_klm_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" w
  for w in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    case "$w" in -*) ;; *) path="\${path:+$path }$w" ;; esac
  done
  local opts=""
  case "$path" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
complete -F _klm_complete klm`;
  return shell === 'zsh' ? `autoload -U +X bashcompinit && bashcompinit\n${fn}` : fn;
}
