// klm's program as the Kyma CLI's scripts meet it, without a cluster: the exit codes of usage
// errors (1, as cobra's), a command group run bare (its help on stdout, exit 0), the Kyma CLI's
// global flags taken after any command, --debug's causes on stderr, and completion for the four
// shells cobra completes (bash, zsh, fish, PowerShell), fish's run where fish is installed.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { completionScript } from '../../src/cli/completion';
import { debugDetails, EXIT } from '../../src/cli/output';
import { program, run } from '../../src/cli/program';

const exec = promisify(execFile);

/** `klm <args>` in this process: its exit code and what it wrote. */
async function klm(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void (stdout += `${a.join(' ')}\n`));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void (stderr += `${a.join(' ')}\n`));
  const code = await run(args);
  vi.restoreAllMocks();
  return { code, stdout, stderr };
}

afterEach(() => vi.restoreAllMocks());

describe('klm exit codes, as the Kyma CLI', () => {
  it('exits 1 for a wrong command line, as cobra does (unknown option, value, command; a missing argument)', async () => {
    expect(EXIT.usage).toBe(1);
    for (const args of [
      ['module', 'list', '-o', 'xml'],
      ['module', 'list', '--no-such-flag'],
      ['module', 'frobnicate'],
      ['frobnicate'],
      ['module', 'add'],
      ['module', 'manage', 'greeter', '--policy', 'Sometimes'],
      ['kyma', 'status', 'no-slash', '--kubeconfig', '/nonexistent/kubeconfig'],
      ['completion', 'tcsh'],
    ]) {
      const r = await klm(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim(), args.join(' ')).not.toBe('');
    }
    expect((await klm(['module', 'frobnicate'])).stderr).toContain("error: unknown command 'frobnicate'");
  });

  it('prints the help of a command group run without a command on stdout, and exits 0 (kyma module, kyma)', async () => {
    for (const args of [['module'], ['modules'], [], ['rollout'], ['kyma'], ['completion']]) {
      const r = await klm(args);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout, args.join(' ')).toMatch(/^Usage: klm/);
      expect(r.stderr, args.join(' ')).toBe('');
    }
    const mod = await klm(['module']);
    for (const command of ['add', 'catalog', 'delete', 'list', 'manage', 'pull', 'unmanage'])
      expect(mod.stdout).toMatch(new RegExp(`\\n  ${command}\\b`));
    expect((await klm(['module', '--help'])).code).toBe(0);
  });
});

describe("the Kyma CLI's global flags", () => {
  it('takes --skip-extensions, --show-extensions-error and --debug before or after any command', async () => {
    for (const args of [
      ['completion', 'bash', '--skip-extensions', '--show-extensions-error', '--debug'],
      ['--skip-extensions', 'completion', 'zsh'],
      ['module', '--show-extensions-error', '--skip-extensions'],
    ]) {
      const r = await klm(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
  });

  it("says in every command's help that the extension flags have no effect in klm", async () => {
    const help = (await klm(['module', 'list', '--help'])).stdout;
    expect(help).toContain('Global Options:');
    expect(help).toMatch(/--skip-extensions\s+no effect: klm has no CLI extensions/);
    expect(help).toMatch(/--show-extensions-error\s+no effect: klm has no CLI extensions/);
    expect(help).toMatch(/--debug\s+also print on stderr what could not be read/);
  });

  it('--debug adds the causes of an error on stderr, stdout untouched', async () => {
    const args = ['module', 'list', '--kubeconfig', '/nonexistent/klm-kubeconfig'];
    const plain = await klm(args);
    const debug = await klm([...args, '--debug']);
    expect(plain.code).toBe(debug.code);
    expect(plain.stderr).not.toContain('klm: debug:');
    expect(debug.stderr).toContain('klm: debug:');
    expect(debug.stdout).toBe(plain.stdout);
    const cause = new Error('outer', { cause: new Error('inner') });
    const lines = debugDetails(cause);
    expect(lines[0]).toBe('Error: outer');
    expect(lines).toContain('caused by: Error: inner');
  });
});

describe('klm completion', () => {
  const words = (script: string, path: string) => {
    const line = script.split('\n').find((l) => l.includes(`${JSON.stringify(path)}*)`));
    return line?.replace(/.*opts="([^"]*)".*/, '$1').split(' ') ?? [];
  };

  it('offers the global flags after every command, and each command by its aliases too (bash, zsh)', () => {
    const bash = completionScript(program(), 'bash');
    expect(words(bash, 'module list')).toEqual(
      expect.arrayContaining(['--show-errors', '-o', '--skip-extensions', '--show-extensions-error', '--debug']),
    );
    expect(words(bash, 'modules del')).toContain('--auto-approve');
    expect(completionScript(program(), 'zsh')).toMatch(/^autoload -U \+X bashcompinit && bashcompinit\n_klm_complete/);
  });

  it('writes fish and PowerShell scripts with every command, option and its description (--no-descriptions: none)', () => {
    const fish = completionScript(program(), 'fish');
    expect(fish).toContain("complete -c klm -f -a '(__klm_complete)'");
    expect(fish).toMatch(/case 'module add\*'\n\s+printf '%s\\n' .*'--default-config-cr\t[^']+'/);
    expect(fish).toMatch(/case 'module\*'\n\s+printf '%s\\n' 'catalog\t.*' 'list\t/);
    const ps = completionScript(program(), 'powershell');
    expect(ps).toContain('Register-ArgumentCompleter -Native -CommandName klm -ScriptBlock');
    expect(ps).toMatch(/'module add\*' \{ \$candidates = @\(.*@\('--default-config-cr', 'deploy the module/);
    expect(ps).toMatch(/'modules del\*' \{ .*@\('--auto-approve', /);
    // A description's quote is doubled, as PowerShell reads it.
    expect(ps).toContain("the Kyma CLI''s command lines");
    const bare = completionScript(program(), 'powershell', false);
    expect(bare).toContain("@('--auto-approve', '--auto-approve')");
    expect(completionScript(program(), 'fish', false)).not.toContain('\t');
  });

  it.skipIf(!(process.env.PATH ?? '').split(':').some((d) => existsSync(`${d}/fish`)))(
    'completes in fish: commands, options of the command typed, by alias, after global flags',
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'klm-fish-'));
      const file = path.join(dir, 'klm.fish');
      await writeFile(file, completionScript(program(), 'fish'));
      const complete = async (line: string) =>
        (await exec('fish', ['--no-config', '-c', `source ${file}; complete -C ${JSON.stringify(line)}`])).stdout
          .trim()
          .split('\n')
          .map((l) => l.split('\t')[0]);
      expect(await complete('klm mo')).toEqual(['module']);
      expect(await complete('klm module ')).toEqual(
        expect.arrayContaining(['add', 'catalog', 'delete', 'list', 'manage', 'pull', 'unmanage']),
      );
      expect(await complete('klm module add greeter --ch')).toEqual(['--channel']);
      expect(await complete('klm --debug modules del x --auto')).toEqual(['--auto-approve']);
      expect(await complete('klm module list --sk')).toEqual(['--skip-extensions']);
    },
  );
});
