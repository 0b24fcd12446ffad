// A Kyma's installs that start together, as one activity (`installModules`): a module's install
// is an activity of its own no longer, which spares the Kyma's history two events of each (and
// the workflow task each completion started). Each module is installed as before (./install.ts)
// and tried again on its own, as Temporal tried an install (five attempts, 1 s doubling to 30 s,
// a typed permanent failure at once), and each attempt passes through the worker's activity
// interceptors as an `installModule` of its module: its log line, its metrics and its
// reconcile duration are a module's, as they were. A module's failure is its outcome, not the
// activity's: the others' go on. Temporal retries the activity itself only when its worker is
// lost (it heartbeats); the steps are idempotent, so the modules are installed again.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { reasonOf } from '../../api/reasons';
import type { Installed, InstallResult } from '../../contract/module';
import type { Readiness } from '../../contract/readiness';
import { MODULE_INSTALL_RETRY } from '../../contract/install-retry';
import { nextAttemptDelayMs } from '../failure';
import { heartbeating } from '../heartbeating';
import type { InstallModuleInput } from './install';

/** One module's install in a batch: its result, or its failure after its last attempt. */
export type InstallOutcome = { value: InstallResult } | { failure: Readiness; attempt?: Installed };

export interface InstallModulesInput {
  installs: InstallModuleInput[];
}

/** The activity type each module's attempt is observed as (logs, metrics, reconcile duration). */
export const MODULE_INSTALL = 'installModule';

/** Module installs one worker runs at once, over all its batches (as its activity slots bounded them). */
export const MODULE_INSTALLS_AT_ONCE = 100;

/** Runs at most `limit` of the functions given at once, the others in the order they came. */
export class Limit {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((r) => this.waiting.push(r));
    else this.running++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** Whether an attempt that failed with `err` is the module's last. */
function lastAttempt(attempt: number, err: unknown): boolean {
  if (err instanceof CancelledFailure) throw err;
  return (err instanceof ApplicationFailure && err.nonRetryable) || attempt >= MODULE_INSTALL_RETRY.maximumAttempts;
}

/** A failed install as the module shows it: its typed reason and message, what it was installing once rendered. */
export function outcomeOfFailure(err: unknown): InstallOutcome {
  const type = err instanceof ApplicationFailure ? err.type : err instanceof Error ? err.name : undefined;
  const failure = { reason: reasonOf(type), message: err instanceof Error ? err.message : String(err) };
  const attempt = err instanceof ApplicationFailure ? (err.details?.[0] as Installed | undefined) : undefined;
  return attempt?.rendered?.digest ? { failure, attempt } : { failure };
}

type InstallOne = (input: InstallModuleInput) => Promise<InstallResult>;

/**
 * `installModules`. `observers`: the worker's activity interceptors, each attempt of a module
 * passes through them as an `installModule` of its own attempt number.
 */
export function installBatchActivities(installModule: InstallOne, observers: ActivityInterceptorsFactory[] = []) {
  const limit = new Limit(MODULE_INSTALLS_AT_ONCE);

  /** One attempt of one module, through the interceptors, as the activity `installModule` would run. */
  function attemptOf(ctx: Context, input: InstallModuleInput, attempt: number): Promise<InstallResult> {
    const info = { ...ctx.info, activityType: MODULE_INSTALL, attempt, retryPolicy: MODULE_INSTALL_RETRY };
    const seen = Object.create(ctx, { info: { value: info } }) as Context;
    const run = observers.reduceRight<(args: unknown[]) => Promise<unknown>>(
      (next, factory) => {
        const inbound = factory(seen).inbound;
        if (!inbound?.execute) return next;
        return (args) => inbound.execute!({ args, headers: {} }, (i) => next(i.args));
      },
      (args) => installModule(args[0] as InstallModuleInput),
    );
    return run([input]) as Promise<InstallResult>;
  }

  async function installOne(ctx: Context, input: InstallModuleInput): Promise<InstallOutcome> {
    for (let attempt = 1; ; attempt++) {
      try {
        return { value: await limit.run(() => attemptOf(ctx, input, attempt)) };
      } catch (err) {
        if (lastAttempt(attempt, err)) return outcomeOfFailure(err);
        await heartbeating(ctx.sleep(nextAttemptDelayMs(MODULE_INSTALL_RETRY, attempt, err)));
      }
    }
  }

  return {
    /** Installs each module of `installs` into its Kyma's target cluster: an outcome each, in their order. */
    async installModules({ installs }: InstallModulesInput): Promise<InstallOutcome[]> {
      const ctx = Context.current();
      return await heartbeating(Promise.all(installs.map((input) => installOne(ctx, input))));
    },
  };
}
