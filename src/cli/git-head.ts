// The commit a module's sources are at, for the git source of its component constructor
// (modulectl's --module-sources-git-directory): `git rev-parse HEAD` run in that directory. A
// directory that is no git repository, or one without a commit, is refused with what to give.
import { execFile } from 'node:child_process';
import { Refused } from './output';

const GIT_TIMEOUT_MS = 10_000;

export function gitHeadCommit(dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-C', dir, 'rev-parse', '--verify', 'HEAD^{commit}'],
      { timeout: GIT_TIMEOUT_MS, windowsHide: true },
      (err, stdout) => {
        const commit = String(stdout).trim();
        if (!err && /^[0-9a-f]{40,64}$/.test(commit)) return resolve(commit);
        const e = err as (NodeJS.ErrnoException & { killed?: boolean }) | null;
        if (e?.code === 'ENOENT')
          return reject(new Refused('git is not on PATH: klm runs it to read the commit of the module sources'));
        const why = e?.killed ? `gave no answer within ${GIT_TIMEOUT_MS / 1000} s` : 'found no repository or no commit';
        reject(
          new Refused(
            `--module-sources-git-directory ${dir}: git ${why} there; give the directory of the module's git repository (a clone with a commit checked out)`,
          ),
        );
      },
    );
  });
}
