import { describe, expect, it } from 'vitest';
import { LocalLane } from '../../src/workflows/local-lane';

/** A local activity stand-in that settles when told. */
function pending<T>() {
  let settle!: { resolve: (v: T) => void; reject: (e: Error) => void };
  const promise = new Promise<T>((resolve, reject) => (settle = { resolve, reject }));
  return { promise, ...settle };
}

describe('LocalLane', () => {
  it('starts a local activity asked for while none runs at once, and the next only once it settled', async () => {
    const lane = new LocalLane();
    const started: string[] = [];
    const [a, b] = [pending<string>(), pending<string>()];
    const ra = lane.run(() => (started.push('a'), a.promise));
    const rb = lane.run(() => (started.push('b'), b.promise));
    expect(started).toEqual(['a']);
    a.resolve('A');
    expect(await ra).toBe('A');
    await Promise.resolve();
    expect(started).toEqual(['a', 'b']);
    b.resolve('B');
    expect(await rb).toBe('B');
  });

  it('goes on with the next after one fails, or throws as it is asked for', async () => {
    const lane = new LocalLane();
    const failing = lane.run(() => Promise.reject(new Error('refused')));
    const throwing = lane.run((): Promise<string> => {
      throw new Error('not registered');
    });
    const next = lane.run(() => Promise.resolve('next'));
    await expect(failing).rejects.toThrow('refused');
    await expect(throwing).rejects.toThrow('not registered');
    expect(await next).toBe('next');
  });

  it('finishes them in the order they were asked for, whatever order their work ends in', async () => {
    const lane = new LocalLane();
    const [slow, fast] = [pending<string>(), pending<string>()];
    const ended: string[] = [];
    const runs = [
      lane.run(() => slow.promise).then((v) => ended.push(v)),
      lane.run(() => fast.promise).then((v) => ended.push(v)),
    ];
    fast.resolve('fast');
    slow.resolve('slow');
    await Promise.all(runs);
    expect(ended).toEqual(['slow', 'fast']);
  });

  it('makes each method of a proxy take its turn', async () => {
    const lane = new LocalLane();
    const calls: string[] = [];
    const first = pending<void>();
    const proxy = lane.serial({
      one: (x: string) => (calls.push(`one ${x}`), first.promise),
      two: (x: string) => (calls.push(`two ${x}`), Promise.resolve(x)),
    });
    const done = [proxy.one('a'), proxy.two('b')];
    expect(calls).toEqual(['one a']);
    first.resolve();
    await Promise.all(done);
    expect(calls).toEqual(['one a', 'two b']);
  });
});
