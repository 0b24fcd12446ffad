// Debian's docker-registry (the CNCF distribution registry) on a loopback port.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from './ports';
import { startProcess, waitUntil, type ManagedProcess } from './process';
import { supervise } from './supervise';

export interface Registry {
  /** host:port, as used in OCI references. */
  host: string;
  url: string;
  process: ManagedProcess;
}

export async function startRegistry(binary: string, dir: string): Promise<Registry> {
  const port = await freePort();
  const root = path.join(dir, 'registry-data');
  await mkdir(root, { recursive: true });
  const config = path.join(dir, 'registry.yml');
  await writeFile(config, [
    'version: 0.1',
    'log:',
    '  level: warn',
    'storage:',
    '  filesystem:',
    `    rootdirectory: ${root}`,
    '  delete:',
    '    enabled: true',
    'http:',
    `  addr: 127.0.0.1:${port}`,
    '',
  ].join('\n'));
  const host = `127.0.0.1:${port}`;
  const url = `http://${host}`;
  const proc = await supervise(
    () => startProcess('registry', binary, ['serve', config], { logFile: path.join(dir, 'registry.log') }),
    (p) => waitUntil(p, 'serving /v2/', async () => (await fetch(`${url}/v2/`)).ok),
  );
  return { host, url, process: proc };
}
