// What the Temporal UI shows of a Kyma's workflow.
import { describe, expect, it } from 'vitest';
import { fitKeywordList, upsertDue, type SearchAttributeValues } from '../../../src/decisions/search-attribute-values';
import { kymaDetails } from '../../../src/decisions/workflow-details';

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

  it('keeps a keyword list within 2 KB of JSON whatever a Kyma holds, and says in the details how many it left out', () => {
    const names = Array.from({ length: 300 }, (_, i) => `module-with-a-rather-long-name-${String(i).padStart(3, '0')}`);
    const fitted = fitKeywordList([...names, names[0]!]);
    expect(Buffer.byteLength(JSON.stringify(fitted.values))).toBeLessThanOrEqual(1900);
    expect(fitted.values).toEqual(names.slice(0, fitted.values.length));
    expect(fitted.omitted).toBe(300 - fitted.values.length);
    expect(fitKeywordList(['ä'.repeat(600), 'b'])).toEqual({ values: ['ä'.repeat(600), 'b'], omitted: 0 });
    expect(fitKeywordList(['ä'.repeat(1000)])).toEqual({ values: [], omitted: 1 });
    const md = kymaDetails(
      { state: 'Ready', modules: names.map((name) => ({ name, state: 'Ready' as const })) },
      fitted.omitted,
    );
    expect(md).toContain(`The search attribute Modules lists the first ${fitted.values.length} of 300 modules`);
  });

  it('shows a Kyma without modules without a table', () => {
    expect(kymaDetails({ state: 'Ready', modules: [] })).not.toContain('|');
  });

  describe('when a status write upserts the search attributes', () => {
    const values = (over: Partial<SearchAttributeValues> = {}): SearchAttributeValues => ({
      state: 'Processing',
      channel: 'regular',
      modules: ['greeter', 'counter'],
      omitted: 0,
      inError: [],
      versions: [],
      ...over,
    });

    it('upserts the first values, and a change of state, channel or modules at once', () => {
      expect(upsertDue(undefined, values())).toBe(true);
      expect(upsertDue(values(), values({ state: 'Ready' }))).toBe(true);
      expect(upsertDue(values(), values({ channel: 'fast' }))).toBe(true);
      expect(upsertDue(values(), values({ modules: ['greeter'] }))).toBe(true);
      expect(upsertDue(values(), values())).toBe(false);
    });

    it('leaves the versions an install reaches on its way for the state the Kyma settles in', () => {
      const installing = values();
      expect(upsertDue(installing, values({ versions: ['counter@1.0.0'] }))).toBe(false);
      expect(upsertDue(installing, values({ versions: ['counter@1.0.0', 'greeter@1.0.0'] }))).toBe(false);
      expect(upsertDue(installing, values({ state: 'Ready', versions: ['counter@1.0.0', 'greeter@1.0.0'] }))).toBe(
        true,
      );
    });

    it('upserts a settled Kyma whose versions or modules in error change without its state', () => {
      const ready = values({ state: 'Ready', versions: ['greeter@1.0.0'] });
      expect(upsertDue(ready, values({ state: 'Ready', versions: ['greeter@1.1.0'] }))).toBe(true);
      const error = values({ state: 'Error', inError: ['greeter'] });
      expect(upsertDue(error, values({ state: 'Error', inError: ['greeter', 'counter'] }))).toBe(true);
    });
  });
});
