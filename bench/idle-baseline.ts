// npx tsx bench/idle-baseline.ts [--settle SECONDS] [--measure SECONDS]
//
// What a worker and a bridge spend with nothing to do: the local stack without target clusters,
// one worker and one bridge from the build (as ./klm-processes.ts starts them for the bench), no
// Kyma. After `--settle` seconds (start-up's garbage collection and compilation done) it reads
// each process's threads' CPU from /proc for `--measure` seconds and prints CPU-s per minute by
// thread (the main thread: JavaScript, timers, the event loop's wake-ups; the SDK Core's tokio
// threads; V8's helper threads), then its resident memory. This is the fixed part of the fleet
// bench's idle CPU and memory, to which each Kyma and cluster add theirs
// (docs/contributor/benchmark.md, "Idle").
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startKlm } from './klm-processes';
import { cpuSecondsOf, sample } from './processes';
import { benchStack } from './stack';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: { settle: { type: 'string', default: '60' }, measure: { type: 'string', default: '60' } },
});
const settleS = Number(values.settle);
const measureS = Number(values.measure);

/** CPU seconds so far of each thread of `pid`, by thread name (threads of one name summed). */
function threadCpu(pid: number): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/-w$|\d+$/, '');
    byName.set(name, (byName.get(name) ?? 0) + cpuSecondsOf(stat));
  }
  return byName;
}

execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
const stack = await benchStack({}, 0);
try {
  const klm = await startKlm(
    {
      kubeconfig: stack.kubeconfig,
      temporalAddress: stack.temporalAddress,
      temporalNamespace: stack.temporalNamespace,
      taskQueue: 'idle-baseline',
      registryHost: stack.registryHost,
      blobCacheDir: path.join(stack.dir, 'blobs'),
      defaultNamespace: '{kyma}',
    },
    stack.dir,
    1,
    { count: 1, leaseNamespace: 'default' },
  );
  const processes = [...klm.workers, ...klm.bridges];
  console.log(`settling ${settleS} s, then measuring ${measureS} s`);
  await new Promise((r) => setTimeout(r, settleS * 1000));
  const before = processes.map((p) => threadCpu(p.pid()!));
  await new Promise((r) => setTimeout(r, measureS * 1000));
  const perMinute = (s: number) => ((s * 60) / measureS).toFixed(2);
  processes.forEach((p, i) => {
    const rows = [...threadCpu(p.pid()!)]
      .map(([name, cpu]) => [name, cpu - (before[i]!.get(name) ?? 0)] as const)
      .filter(([, cpu]) => cpu > 0)
      .sort((a, b) => b[1] - a[1]);
    const total = rows.reduce((sum, [, cpu]) => sum + cpu, 0);
    const rss = sample(p.pid())?.rssMB ?? 0;
    const threads = rows.map(([n, c]) => `${n} ${perMinute(c)}`).join(', ');
    console.log(`${p.label}: ${perMinute(total)} CPU-s/min (${threads}); RSS ${rss.toFixed(0)} MB`);
  });
  for (const p of processes) await p.stop();
} finally {
  await stack.stop();
}
