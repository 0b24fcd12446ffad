// Which names work, and how conditions keep their transition times.
import { describe, expect, it } from 'vitest';
import { mergeConditions } from '../../../src/decisions/conditions';
import { kymaNameProblem, moduleNameProblem } from '../../../src/decisions/names';

describe('names', () => {
  it('takes every Kyma name a label value can hold, and refuses longer ones with what to do', () => {
    expect(kymaNameProblem('k'.repeat(63))).toBeUndefined();
    expect(kymaNameProblem('a.b-c')).toBeUndefined();
    const problem = kymaNameProblem('k'.repeat(64));
    expect(problem?.reason).toBe('InvalidKymaName');
    expect(problem?.message).toContain('the Kyma name is 64 characters long');
    expect(problem?.message).toContain('re-create the Kyma under a name of at most 63 characters');
  });

  it.each([
    ['greeter', true],
    ['btp-operator', true],
    ['a.b', true],
    ['m'.repeat(63), true],
    ['m'.repeat(64), false],
    ['Greeter', false],
    ['-x', false],
    ['x_y', false],
    ['', false],
  ])('module name %j usable: %s', (name, usable) => {
    expect(moduleNameProblem(name) === undefined).toBe(usable);
  });
});

describe('mergeConditions', () => {
  const old = [
    {
      type: 'Modules',
      status: 'False' as const,
      reason: 'Installing',
      message: 'x',
      observedGeneration: 1,
      lastTransitionTime: 'T0',
    },
  ];

  it('keeps the transition time while the status stays, and stamps the generation', () => {
    expect(
      mergeConditions(old, [{ type: 'Modules', status: 'False', reason: 'ResourceError', message: 'y' }], 2, 'T1'),
    ).toEqual([
      {
        type: 'Modules',
        status: 'False',
        reason: 'ResourceError',
        message: 'y',
        observedGeneration: 2,
        lastTransitionTime: 'T0',
      },
    ]);
  });

  it('moves the transition time when the status flips, and for a new condition', () => {
    expect(
      mergeConditions(old, [{ type: 'Modules', status: 'True', reason: 'Ready', message: 'ok' }], 2, 'T1')[0]
        ?.lastTransitionTime,
    ).toBe('T1');
    expect(
      mergeConditions(undefined, [{ type: 'Modules', status: 'True', reason: 'Ready', message: 'ok' }], 1, 'T1')[0]
        ?.lastTransitionTime,
    ).toBe('T1');
  });
});
