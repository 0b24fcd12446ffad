// The Kyma labels the lifecycle manager reads, and the Warning for a value that means nothing.
import { describe, expect, it } from 'vitest';
import { LABELS } from '../../../src/api/shared';
import type { ResolvedModule } from '../../../src/contract/module';
import {
  kymaLabelProblems,
  rolloutPriority,
  templateLabelEvents,
  templateLabelProblems,
} from '../../../src/decisions/label-values';

describe('the values of a Kyma label', () => {
  it('takes what each label means, and names the label and the values it takes for anything else', () => {
    expect(
      kymaLabelProblems({
        [LABELS.skipReconciliation]: 'false',
        [LABELS.beta]: 'TRUE',
        [LABELS.internal]: 'false',
        [LABELS.rolloutPriority]: '-5',
        other: 'yes',
      }),
    ).toEqual([]);
    expect(
      kymaLabelProblems({
        [LABELS.skipReconciliation]: 'True',
        [LABELS.beta]: 'yes',
        [LABELS.rolloutPriority]: 'high',
      }),
    ).toEqual([
      'label operator.kyma-project.io/skip-reconciliation: "True" means nothing: it takes "true" (reconciliation ' +
        'paused) or "false"; it is reconciled as if the label were not there',
      'label operator.kyma-project.io/beta: "yes" means nothing: it takes "true" (it may use beta modules) or ' +
        '"false", in any case; it is offered no beta modules',
      'label operator.kyma-project.io/rollout-priority: "high" means nothing: it takes a number (rollouts take ' +
        'lower ones first); its rollouts take it at 100, as if the label were not there',
    ]);
  });

  it('reads a rollout priority that is no number, blank ones too, as none (100)', () => {
    expect(rolloutPriority({ [LABELS.rolloutPriority]: '7' })).toBe(7);
    expect(rolloutPriority({ [LABELS.rolloutPriority]: '' })).toBe(100);
    expect(rolloutPriority({ [LABELS.rolloutPriority]: 'high' })).toBe(100);
    expect(rolloutPriority(undefined)).toBe(100);
  });

  it("warns the Kyma of its module template's beta or internal value that means nothing, once per template generation", () => {
    const [problem] = templateLabelProblems({ [LABELS.beta]: 'yes', [LABELS.internal]: 'False' });
    expect(problem).toBe(
      'label operator.kyma-project.io/beta: "yes" means nothing: it takes "true" (only Kymas labelled beta may use ' +
        'it) or "false", in any case; it is offered to every Kyma, as if it were not beta',
    );
    const module = (generation: number, problems?: string[]): ResolvedModule => ({
      name: 'greeter',
      channel: 'regular',
      version: '1.0.0',
      customResourcePolicy: 'CreateAndDelete',
      template: { name: 'greeter-1.0.0', namespace: 'kcp-system', generation },
      ...(problems ? { templateLabelProblems: problems } : {}),
    });
    expect(templateLabelEvents(module(1, [problem!]), undefined)).toEqual([
      {
        type: 'Warning',
        reason: 'InvalidLabelValue',
        message: `module greeter: ModuleTemplate kcp-system/greeter-1.0.0 has ${problem}`,
      },
    ]);
    expect(templateLabelEvents(module(1, [problem!]), module(1, [problem!]))).toEqual([]);
    expect(templateLabelEvents(module(2, [problem!]), module(1, [problem!]))).toHaveLength(1);
    expect(templateLabelEvents(module(2), module(1, [problem!]))).toEqual([]);
  });
});
