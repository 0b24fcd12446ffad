// Shell completion for klm, written from commander's own tree of commands and options, so that
// it never lags behind them. commander has none of its own. For each shell the script holds one
// table, deepest command path first: the words typed so far that are no options (`module add`)
// pick the line whose path they start with, and that line's subcommands and options are offered.
// bash (zsh runs it through bashcompinit) offers words; fish and PowerShell also show each one's
// description, as cobra's scripts for the Kyma CLI do (--no-descriptions: words only).
import type { Command } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;
export type Shell = (typeof SHELLS)[number];

interface Word {
  word: string;
  description: string;
}

interface Path {
  words: string;
  completions: Word[];
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}

/** The visible options of `c` as words (long and short), each with its description. */
function optionWords(c: Command): Word[] {
  // Hidden options are old spellings kept for scripts: not offered.
  return c.options
    .filter((o) => !o.hidden)
    .flatMap((o) =>
      [o.long, o.short]
        .filter((f): f is string => Boolean(f))
        .map((word) => ({ word, description: firstLine(o.description) })),
    );
}

function walk(c: Command, prefix: string[], inherited: Word[], out: Path[]): void {
  const subcommands = c.commands.map((s) => ({ word: s.name(), description: firstLine(s.description()) }));
  const own = optionWords(c);
  out.push({
    words: prefix.join(' '),
    completions: [...subcommands, ...own, ...inherited, { word: '--help', description: 'display help for command' }],
  });
  // The program's options (the Kyma CLI's global flags) are taken after every command.
  const passed = prefix.length === 0 ? own : inherited;
  // A command typed by its alias (`klm modules`, `module del`) completes as by its name.
  for (const s of c.commands) for (const name of [s.name(), ...s.aliases()]) walk(s, [...prefix, name], passed, out);
}

/** Every command path of the program with what completes after it, deepest first ("module add" before "module"). */
function paths(root: Command): Path[] {
  const out: Path[] = [];
  walk(root, [], [], out);
  return out.sort((a, b) => b.words.split(' ').length - a.words.split(' ').length || b.words.length - a.words.length);
}

function bash(root: Command, zsh: boolean): string {
  const cases = paths(root)
    .map(
      (p) =>
        `    ${JSON.stringify(p.words)}${p.words ? '*' : ''}) opts=${JSON.stringify(p.completions.map((c) => c.word).join(' '))} ;;`,
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
  return zsh ? `autoload -U +X bashcompinit && bashcompinit\n${fn}` : fn;
}

/** A fish single-quoted string. */
function fishQuote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function fish(root: Command, descriptions: boolean): string {
  const cases = paths(root)
    .map((p) => {
      const lines = p.completions.map((c) => fishQuote(descriptions ? `${c.word}\t${c.description}` : c.word));
      return `        case ${fishQuote(p.words ? `${p.words}*` : '')}\n            printf '%s\\n' ${lines.join(' ')}`;
    })
    .join('\n');
  return `# klm completion for fish: klm completion fish | source
function __klm_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l path
    for w in $words
        string match -q -- '-*' $w; or set -a path $w
    end
    switch "$path"
${cases}
    end
end
complete -c klm -f -a '(__klm_complete)'`;
}

/** A PowerShell single-quoted string. */
function psQuote(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function powershell(root: Command, descriptions: boolean): string {
  const cases = paths(root)
    .map((p) => {
      const pairs = p.completions.map(
        (c) => `@(${psQuote(c.word)}, ${psQuote(descriptions && c.description ? c.description : c.word)})`,
      );
      return `        ${psQuote(p.words ? `${p.words}*` : '')} { $candidates = @(${pairs.join(', ')}); break }`;
    })
    .join('\n');
  return `# klm completion for PowerShell: klm completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName klm -ScriptBlock {
    param($WordToComplete, $CommandAst, $CursorPosition)
    # The command line up to the cursor; its words after klm that are no options name the command.
    $line = "$CommandAst"
    $upTo = $CursorPosition - $CommandAst.Extent.StartOffset
    if ($line.Length -gt $upTo) { $line = $line.Substring(0, $upTo) }
    $words = @($line -split '\\s+' | Where-Object { $_ -ne '' } | Select-Object -Skip 1)
    if ($WordToComplete -ne '' -and $words.Count -gt 0) { $words = @($words | Select-Object -SkipLast 1) }
    $path = (@($words | Where-Object { -not $_.StartsWith('-') }) -join ' ')
    $candidates = @()
    switch -Wildcard ($path) {
${cases}
    }
    foreach ($c in $candidates) {
        if ($c[0] -like "$WordToComplete*") {
            [System.Management.Automation.CompletionResult]::new($c[0], $c[0], 'ParameterValue', $c[1])
        }
    }
}`;
}

/** The completion script for `shell`; `descriptions` false leaves out the words' descriptions (fish, PowerShell). */
export function completionScript(root: Command, shell: Shell, descriptions = true): string {
  if (shell === 'fish') return fish(root, descriptions);
  if (shell === 'powershell') return powershell(root, descriptions);
  return bash(root, shell === 'zsh');
}
