// ModuleTemplate spec.customStateCheck over a module CR, as upstream's lifecycle-manager
// evaluated it (internal/manifest/ready_check.go before PR #1628).
import { describe, expect, it } from 'vitest';
import type { StateCheck } from '../../../src/contract/artifacts';
import { evaluateReadiness } from '../../../src/decisions/readiness';

const HEALTH: StateCheck[] = [
  { jsonPath: 'status.health', value: 'green', mappedState: 'Ready' },
  { jsonPath: 'status.health', value: 'red', mappedState: 'Error' },
  { jsonPath: 'status.health', value: 'yellow', mappedState: 'Warning' },
  { jsonPath: 'status.health', value: 'gone', mappedState: 'Deleting' },
];
const REF = { apiVersion: 'greeter.example.io/v1alpha1', kind: 'Greeter', name: 'default', namespace: 'k1-system' };
const WHAT = 'Greeter k1-system/default';

function check(checks: StateCheck[], live: Record<string, unknown>) {
  return evaluateReadiness({ paused: false, cr: { ref: { ...REF, customStateCheck: checks }, live } });
}

describe('customStateCheck', () => {
  it.each<[string, StateCheck[], Record<string, unknown>, string, string]>([
    ['a value mapped to Ready', HEALTH, { status: { health: 'green' } }, 'Ready', 'module is ready'],
    [
      'a value mapped to Error, with the CR message',
      HEALTH,
      { status: { health: 'red', message: 'disk full' } },
      'ResourceError',
      `${WHAT} is Error by customStateCheck (status.health="red"): disk full`,
    ],
    [
      'a value mapped to Warning',
      HEALTH,
      { status: { health: 'yellow' } },
      'ResourceWarning',
      `${WHAT} is Warning by customStateCheck (status.health="yellow")`,
    ],
    [
      'a value mapped to Deleting',
      HEALTH,
      { status: { health: 'gone' } },
      'ResourceDeleting',
      `${WHAT} is Deleting by customStateCheck (status.health="gone")`,
    ],
    [
      'a value no check maps: Processing',
      HEALTH,
      { status: { health: 'blue' } },
      'ResourceProcessing',
      `${WHAT} is Processing by customStateCheck (status.health="blue")`,
    ],
    [
      'no path present: waiting',
      HEALTH,
      { status: { state: 'Ready' } },
      'ResourceNotReady',
      `waiting for ${WHAT} to report status.health (customStateCheck)`,
    ],
    [
      '.status.state is not consulted when checks are given',
      HEALTH,
      { status: { state: 'Error', health: 'green' } },
      'Ready',
      'module is ready',
    ],
    [
      'a leading dot is allowed',
      [
        { jsonPath: '.status.h', value: 'ok', mappedState: 'Ready' },
        { jsonPath: '.status.h', value: 'ko', mappedState: 'Error' },
      ],
      { status: { h: 'ok' } },
      'Ready',
      'module is ready',
    ],
    [
      'nested paths and fields outside status',
      [
        { jsonPath: 'spec.x.y', value: 'a', mappedState: 'Ready' },
        { jsonPath: 'spec.x.y', value: 'b', mappedState: 'Error' },
      ],
      { spec: { x: { y: 'b' } } },
      'ResourceError',
      `${WHAT} is Error by customStateCheck (spec.x.y="b")`,
    ],
  ])('%s', (_what, checks, live, reason, message) => {
    expect(check(checks, live)).toEqual({ reason, message });
  });

  it('Error wins when the checks for Ready and for Error both hold', () => {
    const checks: StateCheck[] = [
      { jsonPath: 'status.a', value: 'up', mappedState: 'Ready' },
      { jsonPath: 'status.b', value: 'failed', mappedState: 'Error' },
    ];
    expect(check(checks, { status: { a: 'up', b: 'failed' } }).reason).toBe('ResourceError');
    expect(check(checks, { status: { a: 'up', b: 'fine' } }).reason).toBe('Ready');
  });

  it('Ready wins over Warning and Deleting; Warning over Deleting', () => {
    const checks: StateCheck[] = [
      { jsonPath: 'status.a', value: 'x', mappedState: 'Ready' },
      { jsonPath: 'status.a', value: 'never', mappedState: 'Error' },
      { jsonPath: 'status.b', value: 'x', mappedState: 'Warning' },
      { jsonPath: 'status.c', value: 'x', mappedState: 'Deleting' },
    ];
    expect(check(checks, { status: { a: 'x', b: 'x', c: 'x' } }).reason).toBe('Ready');
    expect(check(checks, { status: { a: 'y', b: 'x', c: 'x' } }).reason).toBe('ResourceWarning');
    expect(check(checks, { status: { a: 'y', b: 'y', c: 'x' } }).reason).toBe('ResourceDeleting');
  });

  it('checks mapping to the same state must all hold (those whose path is present)', () => {
    const checks: StateCheck[] = [
      { jsonPath: 'status.a', value: 'up', mappedState: 'Ready' },
      { jsonPath: 'status.b', value: 'up', mappedState: 'Ready' },
      { jsonPath: 'status.a', value: 'down', mappedState: 'Error' },
    ];
    expect(check(checks, { status: { a: 'up', b: 'up' } }).reason).toBe('Ready');
    expect(check(checks, { status: { a: 'up', b: 'starting' } }).reason).toBe('ResourceProcessing');
    // An absent path is skipped, not counted as a mismatch.
    expect(check(checks, { status: { a: 'up' } }).reason).toBe('Ready');
  });

  it('needs a check for Ready and one for Error', () => {
    expect(check([{ jsonPath: 'status.h', value: 'ok', mappedState: 'Ready' }], { status: { h: 'ok' } })).toEqual({
      reason: 'InvalidCustomStateCheck',
      message:
        "the ModuleTemplate's customStateCheck maps no value to Error: it needs at least one check for Ready and one for Error",
    });
    expect(check([{ jsonPath: 'status.h', value: 'ok', mappedState: 'Warning' }], {}).message).toContain(
      'maps no value to Ready and Error',
    );
  });

  it('refuses a path that leads to something other than a string', () => {
    expect(check(HEALTH, { status: { health: { level: 1 } } })).toEqual({
      reason: 'InvalidCustomStateCheck',
      message: `customStateCheck path status.health of ${WHAT} holds an object, not a string`,
    });
    expect(check(HEALTH, { status: { health: 3 } }).reason).toBe('InvalidCustomStateCheck');
  });

  it('leaves manager and CR existence first: a missing CR is still ResourceMissing', () => {
    expect(
      evaluateReadiness({ paused: false, cr: { ref: { ...REF, customStateCheck: HEALTH }, live: undefined } }).reason,
    ).toBe('ResourceMissing');
  });

  it('an empty list keeps the .status.state rule', () => {
    expect(check([], { status: { state: 'Error' } }).reason).toBe('ResourceError');
  });
});
