// The worker's log as a person reads it: one line per entry, at the level asked for.
import { ApplicationFailure, type LogLevel } from '@temporalio/common';
import { LogTimestamp } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { configFromEnv } from '../../src/infra/config';
import { LineLog } from '../../src/infra/log';

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
    expect(() => configFromEnv({ KLM_LOG_LEVEL: 'verbose' })).toThrow('KLM_LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, not "verbose"');
  });
});

describe('LineLog', () => {
  it('writes one line per entry: time, level, message, fields; a multi-line message and an error stay on it', () => {
    const { log, out } = lines('INFO');
    const err = ApplicationFailure.nonRetryable('cluster gone\nreally', 'TargetClusterUnreachable');
    log.warn('first\n  second', { workflowId: MODULE, attempt: 3, error: err, taskToken: 'b3BhcXVl', state: 'two words' });
    expect(out).toHaveLength(1);
    expect(out[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARN first second /);
    expect(out[0]).toContain(` workflowId=${MODULE} attempt=3 error="TargetClusterUnreachable: cluster gone really" state="two words"\n`);
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
    log.info('Initializing worker', { [LogTimestamp]: BigInt(Date.UTC(2026, 0, 2, 3, 4, 5, 678)) * 1_000_000n, sdkComponent: 'core' });
    expect(out).toEqual(['2026-01-02T03:04:05.678Z INFO Initializing worker sdkComponent=core\n']);
  });
});
