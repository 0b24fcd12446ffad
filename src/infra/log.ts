// The worker's log: one line per entry (time, level, message, its fields), at the level
// KLM_LOG_LEVEL sets. It is the Temporal Runtime's logger, so the SDK's lines (the worker's,
// the activities', and Core's, forwarded) come through it as well as our own.
import type { Logger, LogLevel, LogMetadata } from '@temporalio/common';
import { ApplicationFailure } from '@temporalio/common';
import { LogTimestamp } from '@temporalio/worker';
import { LOG_LEVELS } from './config';

const rank = (level: LogLevel) => LOG_LEVELS.indexOf(level);

/**
 * The SDK's line for every failed activity attempt, with the error's stack: the activity
 * interceptor of src/workers/activity-failures.ts says it once per failure instead, so the
 * SDK's is for DEBUG.
 */
function everyAttempt(message: string, meta: LogMetadata | undefined): boolean {
  return message === 'Activity failed' && meta?.sdkComponent === 'worker';
}

/** Fields that say nothing to a person: the task token is an opaque binary handle. */
const SKIPPED = new Set(['taskToken']);

export class LineLog implements Logger {
  constructor(
    readonly level: LogLevel,
    private readonly write: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    const effective = everyAttempt(message, meta) ? 'DEBUG' : level;
    if (rank(effective) < rank(this.level)) return;
    const nanos: unknown = meta?.[LogTimestamp];
    const at = typeof nanos === 'bigint' ? new Date(Number(nanos / 1_000_000n)) : new Date();
    this.write(`${at.toISOString()} ${effective} ${oneLine(message)}${this.fields(meta)}\n`);
  }

  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }

  /** ` key=value` per field; an error as its type and message (and, below INFO, its stack). */
  private fields(meta: LogMetadata | undefined): string {
    let out = '';
    for (const [key, value] of Object.entries(meta ?? {})) {
      if (value === undefined || SKIPPED.has(key)) continue;
      out += ` ${key}=${this.value(value)}`;
    }
    return out;
  }

  private value(v: unknown): string {
    if (v instanceof Error) {
      const type = v instanceof ApplicationFailure && v.type ? v.type : v.name;
      const frames = v.stack
        ?.split('\n')
        .slice(1)
        .map((f) => f.trim().replace(/^at /, ''));
      const stack =
        rank(this.level) < rank('INFO') && frames?.length ? ` stack=${JSON.stringify(frames.join(' < '))}` : '';
      return `${JSON.stringify(oneLine(`${type}: ${v.message}`))}${stack}`;
    }
    if (typeof v === 'string') return /^[\w./:@-]+$/.test(v) ? v : JSON.stringify(oneLine(v));
    if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
    try {
      return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? String(x) : x)) ?? String(v);
    } catch {
      return String(v);
    }
  }
}

function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, ' ');
}
