// The labels a person sets on a Kyma or a ModuleTemplate that the lifecycle manager reads, and the
// values each takes. A value that means nothing to it ("yes", "True" where "true" is meant, a
// rollout priority of "high") is read as if the label were absent, as upstream reads it; the Kyma
// is told so by a Warning Event naming the label and the values it takes (./kyma-state.ts, and
// ./kyma-module-set.ts for the templates it uses).
import type { KymaEvent } from '../api/events';
import { LABELS } from '../api/shared';
import type { ResolvedModule } from '../contract/module';

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

const TEMPLATE_LABELS: LabelRule[] = [
  {
    key: LABELS.beta,
    takes: '"true" (only Kymas labelled beta may use it) or "false", in any case',
    valid: ANY_CASE,
    meanwhile: 'it is offered to every Kyma, as if it were not beta',
  },
  {
    key: LABELS.internal,
    takes: '"true" (only Kymas labelled internal may use it) or "false", in any case',
    valid: ANY_CASE,
    meanwhile: 'it is offered to every Kyma, as if it were not internal',
  },
];

/** A Kyma's place in rollouts: its rollout-priority label, else DEFAULT_ROLLOUT_PRIORITY. */
export function rolloutPriority(labels: Record<string, string> | undefined): number {
  return priorityValue(labels?.[LABELS.rolloutPriority]) ?? DEFAULT_ROLLOUT_PRIORITY;
}

/** The labels `rules` read whose value means nothing: the label, its value, what it takes, what that means meanwhile. */
function problems(rules: LabelRule[], labels: Record<string, string> | undefined): string[] {
  return rules.flatMap((rule) => {
    const value = labels?.[rule.key];
    if (value === undefined || rule.valid(value)) return [];
    return [`label ${rule.key}: "${value}" means nothing: it takes ${rule.takes}; ${rule.meanwhile}`];
  });
}

/** Each label of a Kyma the lifecycle manager reads whose value means nothing to it. */
export function kymaLabelProblems(labels: Record<string, string> | undefined): string[] {
  return problems(KYMA_LABELS, labels);
}

/** Each label of a ModuleTemplate the lifecycle manager reads whose value means nothing to it. */
export function templateLabelProblems(labels: Record<string, string> | undefined): string[] {
  return problems(TEMPLATE_LABELS, labels);
}

/**
 * The Warning Events for the label values of a module's template that mean nothing, once per
 * template generation and problem: none for what `before` (what the module was told last) had already.
 */
export function templateLabelEvents(module: ResolvedModule, before: ResolvedModule | undefined): KymaEvent[] {
  const t = module.template;
  const told =
    before && before.template.name === t.name && before.template.generation === t.generation
      ? (before.templateLabelProblems ?? [])
      : [];
  return (module.templateLabelProblems ?? [])
    .filter((p) => !told.includes(p))
    .map((p) => ({
      type: 'Warning',
      reason: 'InvalidLabelValue',
      message: `module ${module.name}: ModuleTemplate ${t.namespace}/${t.name} has ${p}`,
    }));
}
