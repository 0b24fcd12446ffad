// The control-plane steps of several modules of one Kyma in one local activity: readiness checks
// that decide from the views the bridge sent (no read in a target cluster), the Manifest's pause
// label, a Manifest's deletion. One marker for them all, where each took a local activity of its
// own one after the other in the workflow task. Each ends on its own: a step that fails is its
// module's failure (typed reason and message), tried again here a few times first when it may
// pass, never the others'.
import { ApplicationFailure } from '@temporalio/activity';
import { reasonOf } from '../api/reasons';
import type { KymaRef } from '../contract/kyma';
import type { ModuleAction, ModuleOutcome } from '../decisions/module-steps';
import type { CheckReadinessInput } from './readiness';
import type { ReadinessCheck } from '../contract/readiness';
import type { ManifestInput, ManifestPausedInput } from './manifest';

export interface RunModuleActionsInput {
  kyma: KymaRef;
  actions: { module: string; action: ModuleAction }[];
}

interface Steps {
  checkReadiness(input: CheckReadinessInput): Promise<ReadinessCheck>;
  manifestPaused(input: ManifestPausedInput): Promise<boolean>;
  deleteManifest(input: ManifestInput): Promise<void>;
}

const ATTEMPTS = 3;
const BACKOFF_MS = 500;

/** Runs `fn`, again after a pause when it fails with what may pass (not a permanent failure). */
async function withRetries<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= ATTEMPTS || (err instanceof ApplicationFailure && err.nonRetryable)) throw err;
      await new Promise((r) => setTimeout(r, BACKOFF_MS * attempt));
    }
  }
}

export function moduleActionActivities(steps: Steps) {
  async function runOne(kyma: KymaRef, module: string, a: ModuleAction): Promise<ModuleOutcome> {
    switch (a.kind) {
      case 'checkReadiness': {
        const { kind: _, ...check } = a;
        return { kind: a.kind, value: await steps.checkReadiness({ kyma, module, ...check }) };
      }
      case 'checkPaused':
        return {
          kind: a.kind,
          value: await steps.manifestPaused({ kyma, module, ...(a.seen ? { seen: a.seen } : {}) }),
        };
      case 'deleteManifest':
        await steps.deleteManifest({ kyma, module });
        return { kind: a.kind };
      default:
        throw ApplicationFailure.nonRetryable(`${a.kind} is no control-plane step`, 'Failed');
    }
  }
  return {
    async runModuleActions({ kyma, actions }: RunModuleActionsInput): Promise<ModuleOutcome[]> {
      return await Promise.all(
        actions.map(({ module, action }) =>
          withRetries(() => runOne(kyma, module, action)).catch((err: unknown) => ({
            kind: action.kind,
            failure: {
              reason: reasonOf(err instanceof ApplicationFailure ? err.type : undefined),
              message:
                err instanceof ApplicationFailure
                  ? err.message
                  : `${action.kind}: ${err instanceof Error ? err.message : String(err)}`,
            },
          })),
        ),
      );
    },
  };
}
