// The labels a person sets on a Kyma that the lifecycle manager reads, and the values each takes.
// A value that means nothing to it ("yes", "True" where "true" is meant, a rollout priority of
// "high") is read as if the label were absent, as upstream reads it; the Kyma is told so by a
// Warning Event naming the label and the values it takes (./kyma-state.ts).
import { LABELS } from '../api/shared';

interface LabelRule {
  key: string;
  /** The values it takes, as the Warning says them. */
  takes: string;
  valid: (value: string) => boolean;
  /** How the Kyma is treated meanwhile. */
  meanwhile: string;
}

const TRUE_OR_FALSE = (v: string) => v === 'true' || v === 'false';
const ANY_CASE = (v: string) => /^(true|false)$/i.test(v);

/** The priority a Kyma without a usable rollout-priority label has. */
export const DEFAULT_ROLLOUT_PRIORITY = 100;

/** The rollout-priority label's value as a number, or undefined when it is none (blank, "high"). */
function priorityValue(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

const KYMA_LABELS: LabelRule[] = [
  {
    key: LABELS.skipReconciliation,
    takes: '"true" (reconciliation paused) or "false"',
    valid: TRUE_OR_FALSE,
    meanwhile: 'it is reconciled as if the label were not there',
  },
  {
    key: LABELS.beta,
    takes: '"true" (it may use beta modules) or "false", in any case',
    valid: ANY_CASE,
    meanwhile: 'it is offered no beta modules',
  },
  {
    key: LABELS.internal,
    takes: '"true" (it may use internal modules) or "false", in any case',
    valid: ANY_CASE,
    meanwhile: 'it is offered no internal modules',
  },
  {
    key: LABELS.rolloutPriority,
    takes: 'a number (rollouts take lower ones first)',
    valid: (v) => priorityValue(v) !== undefined,
    meanwhile: `its rollouts take it at ${DEFAULT_ROLLOUT_PRIORITY}, as if the label were not there`,
  },
];

/** A Kyma's place in rollouts: its rollout-priority label, else DEFAULT_ROLLOUT_PRIORITY. */
export function rolloutPriority(labels: Record<string, string> | undefined): number {
  return priorityValue(labels?.[LABELS.rolloutPriority]) ?? DEFAULT_ROLLOUT_PRIORITY;
}

/** Each label of a Kyma the lifecycle manager reads whose value means nothing to it: the label, its value, what it takes. */
export function kymaLabelProblems(labels: Record<string, string> | undefined): string[] {
  return KYMA_LABELS.flatMap((rule) => {
    const value = labels?.[rule.key];
    if (value === undefined || rule.valid(value)) return [];
    return [`label ${rule.key}: "${value}" means nothing: it takes ${rule.takes}; ${rule.meanwhile}`];
  });
}
