// The one visibility rule that the worker, the bridge and the command line ask.
import { describe, expect, it } from 'vitest';
import { kymaVisibility, missingLabel, visibilityOf } from '../../../src/decisions/visibility';

const BETA = 'operator.kyma-project.io/beta';
const INTERNAL = 'operator.kyma-project.io/internal';

describe('visibility', () => {
  it.each([
    ['"true"', { [BETA]: 'true' }, { beta: true, internal: false }],
    ['"True" (any case, as upstream)', { [BETA]: 'True', [INTERNAL]: 'TRUE' }, { beta: true, internal: true }],
    ['"false"', { [BETA]: 'false', [INTERNAL]: 'no' }, { beta: false, internal: false }],
    ['no labels', undefined, { beta: false, internal: false }],
  ] as const)('reads the labels %s', (_what, labels, expected) => {
    expect(visibilityOf(labels)).toEqual(expected);
  });

  it.each([
    ['an unlabelled template to any Kyma', {}, {}, undefined],
    ['a beta template to a Kyma without the beta label', { [BETA]: 'True' }, {}, 'beta'],
    ['a beta template to a beta Kyma', { [BETA]: 'true' }, { [BETA]: 'true' }, undefined],
    [
      'an internal beta template to a beta Kyma: internal first',
      { [BETA]: 'true', [INTERNAL]: 'true' },
      { [BETA]: 'true' },
      'internal',
    ],
    [
      'an internal beta template to an internal Kyma',
      { [BETA]: 'true', [INTERNAL]: 'true' },
      { [INTERNAL]: 'true' },
      'beta',
    ],
    [
      'an internal beta template to a Kyma with both',
      { [BETA]: 'true', [INTERNAL]: 'true' },
      { [BETA]: 'TRUE', [INTERNAL]: 'true' },
      undefined,
    ],
  ] as const)('names the label missing for %s', (_what, template, kyma, missing) => {
    expect(missingLabel(visibilityOf(template), visibilityOf(kyma))).toBe(missing);
  });

  it(
    'lets a runtime Kyma see the whole catalog synced into its cluster (its control-plane ' +
      "Kyma's labels chose it), and a control-plane Kyma what its labels say",
    () => {
      expect(
        kymaVisibility({ metadata: { annotations: { 'operator.kyma-project.io/control-plane-kyma': 'kcp/k1' } } }),
      ).toEqual({ beta: true, internal: true });
      expect(kymaVisibility({ metadata: { labels: { [BETA]: 'true' } } })).toEqual({ beta: true, internal: false });
    },
  );

  it('hides a labelled template from a Kyma whose labels are unknown', () => {
    expect(missingLabel({ beta: true, internal: false }, undefined)).toBe('beta');
  });
});
