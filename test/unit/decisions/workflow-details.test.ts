// What the Temporal UI shows of Kyma and module workflows.
import { describe, expect, it } from 'vitest';
import { kymaDetails, moduleDetails } from '../../../src/decisions/workflow-details';

describe('workflow details', () => {
  it("shows a Kyma's state, channel, what is wrong, and a row per module", () => {
    const md = kymaDetails({
      state: 'Error',
      activeChannel: 'regular',
      lastOperation: { operation: 'greeter: the CR | says Error' },
      modules: [
        { name: 'greeter', version: '1.0.0', channel: 'regular', state: 'Error', message: 'the CR | says\nError' },
        { name: 'counter', version: '1.0.0', channel: 'regular', state: 'Ready', message: 'module is ready' },
      ],
    });
    expect(md.split('\n')[0]).toBe('**Error** on channel **regular**');
    expect(md).toContain('| greeter | 1.0.0 | regular | Error | the CR \\| says Error |');
    expect(md).toContain('| counter | 1.0.0 | regular | Ready | module is ready |');
  });

  it('shows a Kyma without modules without a table', () => {
    expect(kymaDetails({ state: 'Ready', modules: [] })).not.toContain('|');
  });

  it("shows a module's state with its reason, version and channel", () => {
    expect(moduleDetails({ reason: 'ManagerNotAvailable', status: { name: 'greeter', version: '1.1.0', channel: 'fast', state: 'Processing', message: 'waiting for the manager' } })).toBe('**greeter** (version 1.1.0, channel fast): **Processing** (ManagerNotAvailable)\n\nwaiting for the manager');
  });
});
