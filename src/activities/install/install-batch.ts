// A Kyma's installs that start together, as one activity (`installModules`): a module's install
// is an activity of its own no longer, which spares the Kyma's history two events of each (and
// the workflow task each completion started). Each module is installed as before (./install.ts)
// and tried again on its own, as Temporal tried an install (five attempts, 1 s doubling to 30 s,
// a typed permanent failure at once), and each attempt passes through the worker's activity
// interceptors as an `installModule` of its module: its log line, its metrics and its
// reconcile duration are a module's, as they were. A module's failure is its outcome, not the
// activity's: the others' go on. Temporal retries the activity itself only when its worker is
// lost (it heartbeats); the steps are idempotent, so the modules are installed again.
// The runtime's catalog sync, when it is due as the installs start (a new Kyma's first
// installs), goes along in the same activity: three events fewer in the Kyma's history and one
// workflow task. It is tried as Temporal tried it as an activity of its own (three attempts, 1 s
// doubling to 10 s), each attempt a `syncRuntimeCatalog` to the interceptors.
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import type { RetryPolicy } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { reasonOf } from '../../api/reasons';
import type { Installed, InstallResult } from '../../contract/module';
import type { Readiness } from '../../contract/readiness';
import { MODULE_INSTALL_RETRY } from '../../contract/install-retry';
import { RUNTIME_STEP_RETRY, type CatalogSync, type SyncRuntimeCatalogInput } from '../../contract/runtime';
import { nextAttemptDelayMs } from '../failure';
import { heartbeating } from '../heartbeating';
import type { InstallModuleInput } from './install';

/** One module's install in a batch: its result, or its failure after its last attempt. */
export type InstallOutcome = { value: InstallResult } | { failure: Readiness; attempt?: Installed };

export interface InstallModulesInput {
  installs: InstallModuleInput[];
  /** The runtime's catalog sync, due as the installs start. */
  catalog?: SyncRuntimeCatalogInput;
}

/** The catalog sync's result, or its failure after its last attempt. */
export type CatalogOutcome = CatalogSync | { failure: Readiness };

export interface InstallModulesResult {
  /** An outcome per install, in their order. */
  installs: InstallOutcome[];
  /** The catalog sync's, when one went along. */
  catalog?: CatalogOutcome;
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

/** The activity type each attempt of the catalog sync is observed as. */
export const CATALOG_SYNC = 'syncRuntimeCatalog';

/** Whether an attempt that failed with `err` is the last under `policy`. */
function lastAttempt(policy: RetryPolicy, attempt: number, err: unknown): boolean {
  if (err instanceof CancelledFailure) throw err;
  return (err instanceof ApplicationFailure && err.nonRetryable) || attempt >= (policy.maximumAttempts ?? Infinity);
}

/** A failure as the module or the Kyma shows it: its typed reason and message. */
function failureOfError(err: unknown): Readiness {
  const type = err instanceof ApplicationFailure ? err.type : err instanceof Error ? err.name : undefined;
  return { reason: reasonOf(type), message: err instanceof Error ? err.message : String(err) };
}

/** A failed install as the module shows it: its typed reason and message, what it was installing once rendered. */
export function outcomeOfFailure(err: unknown): InstallOutcome {
  const failure = failureOfError(err);
  const attempt = err instanceof ApplicationFailure ? (err.details?.[0] as Installed | undefined) : undefined;
  return attempt?.rendered?.digest ? { failure, attempt } : { failure };
}

type InstallOne = (input: InstallModuleInput) => Promise<InstallResult>;
type SyncCatalog = (input: SyncRuntimeCatalogInput) => Promise<CatalogSync>;

/** What one kind of step in the batch is, to the interceptors and for its attempts. */
interface StepKind<I, R> {
  activityType: string;
  retryPolicy: RetryPolicy;
  run: (input: I) => Promise<R>;
  /** What bounds its attempts over the worker's batches (their wait not an attempt's time). */
  limit?: Limit;
}

/**
 * `installModules`. `observers`: the worker's activity interceptors, each attempt of a module
 * passes through them as an `installModule` of its own attempt number, each of the catalog sync
 * as a `syncRuntimeCatalog`.
 */
export function installBatchActivities(
  steps: { installModule: InstallOne; syncRuntimeCatalog: SyncCatalog },
  observers: ActivityInterceptorsFactory[] = [],
) {
  const install: StepKind<InstallModuleInput, InstallResult> = {
    activityType: MODULE_INSTALL,
    retryPolicy: MODULE_INSTALL_RETRY,
    run: steps.installModule,
    limit: new Limit(MODULE_INSTALLS_AT_ONCE),
  };
  const catalog: StepKind<SyncRuntimeCatalogInput, CatalogSync> = {
    activityType: CATALOG_SYNC,
    retryPolicy: RUNTIME_STEP_RETRY,
    run: steps.syncRuntimeCatalog,
  };

  /** One attempt of one step, through the interceptors, as an activity of its own kind would run. */
  function attemptOf<I, R>(ctx: Context, kind: StepKind<I, R>, input: I, attempt: number): Promise<R> {
    const info = { ...ctx.info, activityType: kind.activityType, attempt, retryPolicy: kind.retryPolicy };
    const seen = Object.create(ctx, { info: { value: info } }) as Context;
    const run = observers.reduceRight<(args: unknown[]) => Promise<unknown>>(
      (next, factory) => {
        const inbound = factory(seen).inbound;
        if (!inbound?.execute) return next;
        return (args) => inbound.execute!({ args, headers: {} }, (i) => next(i.args));
      },
      (args) => kind.run(args[0] as I),
    );
    return run([input]) as Promise<R>;
  }

  /** A step tried until it succeeds (`ok` of its result) or its last attempt fails (`failed` of its error; a cancellation is thrown). */
  async function tried<I, R, O>(
    ctx: Context,
    kind: StepKind<I, R>,
    input: I,
    ok: (r: R) => O,
    failed: (err: unknown) => O,
  ): Promise<O> {
    for (let attempt = 1; ; attempt++) {
      try {
        const attempted = () => attemptOf(ctx, kind, input, attempt);
        return ok(await (kind.limit ? kind.limit.run(attempted) : attempted()));
      } catch (err) {
        if (lastAttempt(kind.retryPolicy, attempt, err)) return failed(err);
        await heartbeating(ctx.sleep(nextAttemptDelayMs(kind.retryPolicy, attempt, err)));
      }
    }
  }

  return {
    /**
     * Installs each module of `installs` into its Kyma's target cluster, an outcome each in their
     * order, and syncs the runtime's catalog beside them when `catalog` asks.
     */
    async installModules({ installs, catalog: sync }: InstallModulesInput): Promise<InstallModulesResult> {
      const ctx = Context.current();
      const outcomes = Promise.all(
        installs.map((input) => tried(ctx, install, input, (value): InstallOutcome => ({ value }), outcomeOfFailure)),
      );
      const synced = sync
        ? tried(
            ctx,
            catalog,
            sync,
            (r): CatalogOutcome => r,
            (err) => ({ failure: failureOfError(err) }),
          )
        : undefined;
      const [done, catalogDone] = await heartbeating(Promise.all([outcomes, synced]));
      return { installs: done, ...(catalogDone ? { catalog: catalogDone } : {}) };
    },
  };
}
