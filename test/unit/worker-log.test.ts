// The worker's log as a person reads it: one line per entry, at the level asked for, and one
// line per failure of an activity, not one per attempt.
import { ApplicationFailure, type LogLevel, type RetryPolicy } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { LogTimestamp } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../src/infra/config';
import { FailureLog, span, type AttemptFailure } from '../../src/infra/failure-log';
import { LineLog } from '../../src/infra/log';
import { activityFailureLog, retryOutlook } from '../../src/workers/activity-failures';

const MIN = 60_000;
const MODULE = 'kyma/kcp-system/kyma-1/module/greeter';

function lines(level: LogLevel): { log: LineLog; out: string[] } {
  const out: string[] = [];
  return { log: new LineLog(level, (l) => out.push(l)), out };
}

describe('the log level', () => {
  it('is KLM_LOG_LEVEL, in any case; unset, each process has its default', () => {
    expect(configFromEnv({}).logLevel).toBeUndefined();
    expect(configFromEnv({ KLM_LOG_LEVEL: 'debug' }).logLevel).toBe('DEBUG');
    expect(configFromEnv({ KLM_LOG_LEVEL: 'WARN' }).logLevel).toBe('WARN');
    expect(() => configFromEnv({ KLM_LOG_LEVEL: 'verbose' })).toThrow(
      'KLM_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, not "verbose"',
    );
  });
});

describe('LineLog', () => {
  it('writes one line per entry: time, level, message, fields; a multi-line message and an error stay on it', () => {
    const { log, out } = lines('INFO');
    const err = ApplicationFailure.nonRetryable('cluster gone\nreally', 'TargetClusterUnreachable');
    log.warn('first\n  second', {
      workflowId: MODULE,
      attempt: 3,
      error: err,
      taskToken: 'b3BhcXVl',
      state: 'two words',
    });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARN first second /);
    expect(out[0]).toContain(
      ` workflowId=${MODULE} attempt=3 error="TargetClusterUnreachable: cluster gone really" state="two words"\n`,
    );
    // An opaque handle says nothing to a person; the stack only below INFO.
    expect(out[0]).not.toContain('taskToken');
    expect(out[0]).not.toContain('stack=');
    expect(out[0]!.indexOf('\n')).toBe(out[0]!.length - 1);
  });

  it('keeps what is below its level out, and shows an error stack on the line at DEBUG', () => {
    const { log, out } = lines('WARN');
    log.info('chatter');
    log.debug('more chatter');
    log.error('broken');
    expect(out.map((l) => l.split(' ')[1])).toEqual(['ERROR']);
    const debug = lines('DEBUG');
    debug.log.debug('with stack', { error: new Error('boom') });
    expect(debug.out).toHaveLength(1);
    expect(debug.out[0]).toMatch(/error="Error: boom" stack=".*worker-log\.test\.ts/);
  });

  it("takes the time of an entry from the SDK's timestamp (Core's forwarded lines)", () => {
    const { log, out } = lines('INFO');
    log.info('Initializing worker', {
      [LogTimestamp]: BigInt(Date.UTC(2026, 0, 2, 3, 4, 5, 678)) * 1_000_000n,
      sdkComponent: 'core',
    });
    expect(out).toEqual(['2026-01-02T03:04:05.678Z INFO Initializing worker sdkComponent=core\n']);
  });

  it("puts the SDK's line per failed activity attempt at DEBUG", () => {
    const meta = { sdkComponent: 'worker', activityType: 'installModule', error: new Error('x') };
    const info = lines('INFO');
    info.log.warn('Activity failed', meta);
    expect(info.out).toEqual([]);
    const debug = lines('DEBUG');
    debug.log.warn('Activity failed', meta);
    expect(debug.out[0]).toMatch(
      / DEBUG Activity failed sdkComponent=worker activityType=installModule error="Error: x"/,
    );
  });
});

describe('FailureLog', () => {
  const failure = (over: Partial<AttemptFailure> = {}): AttemptFailure => ({
    workflowId: MODULE,
    activity: 'installModule',
    reason: 'RegistryUnavailable',
    message: 'registry r.example unreachable',
    next: 'attempt 1 of 5, next in 1s',
    ...over,
  });

  it('writes a failure once, with its reason, workflow and next try, and not again for attempts that fail the same way', () => {
    const log = new FailureLog(10 * MIN);
    expect(log.failed(failure(), 0)).toBe(
      `${MODULE}: installModule failed (RegistryUnavailable): registry r.example unreachable; attempt 1 of 5, next in 1s`,
    );
    for (let t = 1; t < 50; t++)
      expect(log.failed(failure({ next: `attempt ${t + 1} of 5` }), t * 1000)).toBeUndefined();
  });

  it('writes a failure of another reason or message, and of another activity or workflow, each once', () => {
    const log = new FailureLog(10 * MIN);
    const written = [
      failure(),
      failure({ message: 'registry r.example refused the credentials', reason: 'RegistryCredentialsRefused' }),
      failure({ message: 'registry r.example did not answer in time' }),
      failure(), // back to the first: already said
      failure({ activity: 'checkReadiness' }),
      failure({ workflowId: 'kyma/kcp-system/kyma-2/module/greeter' }),
      failure({ message: 'registry r.example did not answer in time' }),
    ].map((f, i) => log.failed(f, i * 1000));
    expect(written.map((l) => l !== undefined)).toEqual([true, true, true, false, true, true, false]);
    expect(written[1]).toContain(
      'installModule failed (RegistryCredentialsRefused): registry r.example refused the credentials',
    );
  });

  it('reminds of a failure that goes on once the window has passed, with how often it failed meanwhile', () => {
    const log = new FailureLog(10 * MIN);
    log.failed(failure(), 0);
    for (let t = 1; t <= 11; t++) log.failed(failure(), t * 50_000);
    expect(log.failed(failure({ next: 'attempt 1 of 5, next in 1s' }), 10 * MIN)).toBe(
      `${MODULE}: installModule failed again (RegistryUnavailable), 12 times in 10m: registry r.example unreachable; attempt 1 of 5, next in 1s`,
    );
    expect(log.failed(failure(), 11 * MIN)).toBeUndefined();
    expect(log.failed(failure(), 20 * MIN)).toContain('failed again (RegistryUnavailable), 2 times in 10m');
  });

  it('writes a line when a failing activity succeeds, and starts afresh after it', () => {
    const log = new FailureLog(10 * MIN);
    expect(log.succeeded(MODULE, 'installModule', 0)).toBeUndefined();
    log.failed(failure(), 0);
    log.failed(failure({ reason: 'RegistryError', message: 'HTTP 500' }), 30_000);
    log.failed(failure(), 90_000);
    expect(log.succeeded(MODULE, 'checkReadiness', 95_000)).toBeUndefined();
    expect(log.succeeded(MODULE, 'installModule', 100_000)).toBe(
      `${MODULE}: installModule succeeded after 3 failed attempts in 1m40s`,
    );
    expect(log.succeeded(MODULE, 'installModule', 101_000)).toBeUndefined();
    expect(log.failed(failure(), 102_000)).toContain('installModule failed (RegistryUnavailable)');
  });

  it('forgets the oldest failing activity beyond what it keeps', () => {
    const log = new FailureLog(10 * MIN, 2);
    for (const id of ['a', 'b', 'c']) log.failed(failure({ workflowId: id }), 0);
    expect(log.succeeded('a', 'installModule', 1)).toBeUndefined();
    expect(log.succeeded('c', 'installModule', 1)).toContain('succeeded after 1 failed attempt in');
  });

  it('tells spans as a person reads them', () => {
    expect([1000, 1500, 30_000, 90_000, 10 * MIN, 65 * MIN, 120 * MIN].map(span)).toEqual([
      '1s',
      '1.5s',
      '30s',
      '1m30s',
      '10m',
      '1h5m',
      '2h',
    ]);
  });
});

describe('retryOutlook', () => {
  const STEP: RetryPolicy = {
    initialInterval: 1000,
    backoffCoefficient: 2,
    maximumInterval: 30_000,
    maximumAttempts: 5,
  };
  const after = 'the workflow takes over';
  const retryable = ApplicationFailure.retryable('registry unreachable', 'RegistryUnavailable');

  it("says Temporal's next attempt from the retry policy, and what comes after the last", () => {
    expect(retryOutlook({ attempt: 1, retryPolicy: STEP }, retryable, after)).toBe(
      'attempt 1 of 5, next in 1s; after the last, the workflow takes over',
    );
    expect(retryOutlook({ attempt: 3, retryPolicy: STEP }, retryable, after)).toBe(
      'attempt 3 of 5, next in 4s; after the last, the workflow takes over',
    );
    expect(retryOutlook({ attempt: 4, retryPolicy: { ...STEP, maximumInterval: 5000 } }, retryable, after)).toBe(
      'attempt 4 of 5, next in 5s; after the last, the workflow takes over',
    );
    expect(retryOutlook({ attempt: 5, retryPolicy: STEP }, retryable, after)).toBe(
      'attempt 5 of 5, the last; the workflow takes over',
    );
  });

  it("takes the failure's own next retry delay (a registry's Retry-After)", () => {
    const later = ApplicationFailure.create({
      message: 'slow down',
      type: 'RegistryUnavailable',
      nextRetryDelay: 120_000,
    });
    expect(retryOutlook({ attempt: 1, retryPolicy: STEP }, later, after)).toBe(
      'attempt 1 of 5, next in 2m; after the last, the workflow takes over',
    );
  });

  it('says a permanent failure is not retried by Temporal, by its flag or by the policy', () => {
    expect(
      retryOutlook(
        { attempt: 1, retryPolicy: STEP },
        ApplicationFailure.nonRetryable('gone', 'TargetClusterUnreachable'),
        after,
      ),
    ).toBe('not retried by Temporal (permanent); the workflow takes over');
    expect(
      retryOutlook(
        { attempt: 1, retryPolicy: { ...STEP, nonRetryableErrorTypes: ['RegistryUnavailable'] } },
        retryable,
        after,
      ),
    ).toBe('not retried by Temporal (permanent); the workflow takes over');
  });

  it("retries without end where the policy sets no limit, with Temporal's defaults where it sets nothing", () => {
    expect(
      retryOutlook(
        { attempt: 2, retryPolicy: { initialInterval: 1000, maximumInterval: 30_000 } },
        new Error('conflict'),
        after,
      ),
    ).toBe('attempt 2, next in 2s, until it succeeds');
    expect(retryOutlook({ attempt: 10 }, new Error('conflict'), after)).toBe(
      'attempt 10, next in 1m40s, until it succeeds',
    );
  });
});

describe('the activity interceptor with the SDK', () => {
  /** Runs `fn` as attempt `attempt` of installModule of MODULE, with the interceptor and the log. */
  async function attempt(
    factory: ReturnType<typeof activityFailureLog>,
    log: LineLog,
    n: number,
    fn: () => Promise<string>,
  ): Promise<void> {
    const env = new MockActivityEnvironment(
      {
        attempt: n,
        activityType: 'installModule',
        workflowExecution: { workflowId: MODULE, runId: 'r' },
        retryPolicy: { initialInterval: 1000, backoffCoefficient: 2, maximumInterval: 30_000, maximumAttempts: 5 },
      },
      { interceptors: [factory], logger: log },
    );
    await env.run(fn).catch(() => undefined);
  }

  it('writes one line for five attempts that fail alike and the give-ups after them, and one when the activity succeeds', async () => {
    const { log, out } = lines('INFO');
    const factory = activityFailureLog({ installRetryMs: 30_000, driftIntervalMs: 10 * MIN }, () => log);
    const fail = () =>
      Promise.reject(ApplicationFailure.retryable('registry r.example unreachable', 'RegistryUnavailable'));
    for (let cycle = 0; cycle < 3; cycle++) for (let n = 1; n <= 5; n++) await attempt(factory, log, n, fail);
    expect(out).toHaveLength(1);
    expect(out[0]).toContain(
      `WARN ${MODULE}: installModule failed (RegistryUnavailable): registry r.example ` +
        `unreachable; attempt 1 of 5, next in 1s; after the last, the workflow shows the failure ` +
        `and tries again after 30s, doubling up to 10m, or at the next change`,
    );
    await attempt(factory, log, 1, () => Promise.resolve('installed'));
    expect(out).toHaveLength(2);
    expect(out[1]).toMatch(new RegExp(`INFO ${MODULE}: installModule succeeded after 15 failed attempts in \\d`));
  });

  it('shows every attempt, with the SDK’s own line, at DEBUG', async () => {
    const { log, out } = lines('DEBUG');
    const factory = activityFailureLog({ installRetryMs: 30_000, driftIntervalMs: 10 * MIN }, () => log);
    for (let n = 1; n <= 3; n++)
      await attempt(factory, log, n, () =>
        Promise.reject(ApplicationFailure.retryable('unreachable', 'RegistryUnavailable')),
      );
    expect(out.filter((l) => / DEBUG Activity failed .*attempt=\d/.test(l))).toHaveLength(3);
  });
});
