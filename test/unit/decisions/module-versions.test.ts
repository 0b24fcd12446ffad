// What runs and what is wanted, as klm module list and why tell them apart.
import { describe, expect, it } from 'vitest';
import type { Resolution } from '../../../src/contract/module';
import { moduleVersions } from '../../../src/decisions/module-versions';
import { mod } from './fixtures';

describe('moduleVersions', () => {
  const resolved: Resolution = { name: 'greeter', module: mod('1.1.0') };
  const noTemplate: Resolution = {
    name: 'greeter',
    channel: 'fast',
    version: '1.2.0',
    failure: { reason: 'TemplateNotFound', message: 'no ModuleTemplate "greeter-1.2.0"' },
  };
  const unknown: Resolution = {
    name: 'nosuch',
    channel: 'regular',
    failure: { reason: 'ModuleNotFound', message: 'module "nosuch" is unknown' },
  };

  it.each([
    [
      'an installed module on the version it wants',
      { version: '1.1.0' },
      resolved,
      { installed: '1.1.0', wanted: '1.1.0' },
    ],
    [
      'an installed module that wants another version',
      { version: '1.0.0' },
      resolved,
      { installed: '1.0.0', wanted: '1.1.0' },
    ],
    ['a module never installed whose version has no template', {}, noTemplate, { wanted: '1.2.0' }],
    ['an unknown module', {}, unknown, {}],
    ['a module without a status entry yet', undefined, resolved, { wanted: '1.1.0' }],
    ['a module that left the spec and is still installed', { version: '1.0.0' }, undefined, { installed: '1.0.0' }],
  ] as const)('tells %s', (_what, status, resolution, expected) => {
    expect(moduleVersions(status, resolution)).toEqual(expected);
  });
});
