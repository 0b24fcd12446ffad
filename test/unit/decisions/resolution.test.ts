// Module resolution over an in-memory catalog: channel → version → template → typed failure.
import { describe, expect, it } from 'vitest';
import type { ModuleReleaseMeta } from '../../../src/api/modulereleasemeta';
import type { SpecModule } from '../../../src/contract/kyma';
import {
  listedCatalog,
  moduleNameMismatchEvent,
  resolveModule,
  type ModuleCatalog,
} from '../../../src/decisions/resolution';

function catalog(
  metas: Record<string, ModuleReleaseMeta['spec']>,
  templates: Record<
    string,
    { version?: string; generation?: number; labels?: Record<string, string>; moduleName?: string }
  >,
): ModuleCatalog {
  return {
    namespace: 'kcp',
    releaseMeta: (name) =>
      Promise.resolve(
        metas[name] && {
          apiVersion: 'operator.kyma-project.io/v1beta2',
          kind: 'ModuleReleaseMeta',
          metadata: { name },
          spec: metas[name],
        },
      ),
    template: (name) =>
      Promise.resolve(
        templates[name] && {
          apiVersion: 'operator.kyma-project.io/v1beta2',
          kind: 'ModuleTemplate',
          metadata: {
            name,
            generation: templates[name].generation ?? 1,
            ...(templates[name].labels ? { labels: templates[name].labels } : {}),
          },
          spec: {
            version: templates[name].version,
            ...(templates[name].moduleName ? { moduleName: templates[name].moduleName } : {}),
            descriptor: { component: { name: 'kyma-project.io/module/greeter' } },
          },
        },
      ),
  };
}

const CATALOG = catalog(
  {
    greeter: {
      moduleName: 'greeter',
      channels: [
        { channel: 'regular', version: '1.0.0' },
        { channel: 'fast', version: '1.1.0' },
      ],
    },
    ghost: { moduleName: 'ghost', channels: [{ channel: 'regular', version: '9.9.9' }] },
    broken: { moduleName: 'broken', channels: [{ channel: 'regular', version: 'latest' }] },
    liar: { moduleName: 'liar', channels: [{ channel: 'regular', version: '2.0.0' }] },
    always: { moduleName: 'always', mandatory: { version: '3.0.0' } },
    preview: { moduleName: 'preview', channels: [{ channel: 'regular', version: '0.1.0' }] },
    staff: { moduleName: 'staff', channels: [{ channel: 'regular', version: '1.0.0' }] },
    twin: { moduleName: 'twin', channels: [{ channel: 'regular', version: '1.0.0' }] },
  },
  {
    'preview-0.1.0': { version: '0.1.0', labels: { 'operator.kyma-project.io/beta': 'True' } },
    'staff-1.0.0': {
      version: '1.0.0',
      labels: { 'operator.kyma-project.io/internal': 'true', 'operator.kyma-project.io/beta': 'true' },
    },
    'greeter-1.0.0': { version: '1.0.0', moduleName: 'greeter' },
    'greeter-1.1.0': { version: '1.1.0', generation: 4 },
    'liar-2.0.0': { version: '2.0.1' },
    'always-3.0.0': {},
    'twin-1.0.0': { version: '1.0.0', generation: 3, moduleName: 'other' },
  },
);

const spec = (name: string, over: Partial<SpecModule> = {}): SpecModule => ({
  name,
  customResourcePolicy: 'CreateAndDelete',
  managed: true,
  ...over,
});

describe('resolveModule', () => {
  it.each([
    ["the Kyma's channel", spec('greeter'), 'regular', { channel: 'regular', version: '1.0.0' }],
    [
      "the module's own channel over the Kyma's",
      spec('greeter', { channel: 'fast' }),
      'regular',
      { channel: 'fast', version: '1.1.0', template: { name: 'greeter-1.1.0', namespace: 'kcp', generation: 4 } },
    ],
    ['regular when the Kyma names none', spec('greeter'), '', { channel: 'regular', version: '1.0.0' }],
    [
      'a version pin, whatever the channels',
      spec('greeter', { version: '1.1.0' }),
      'regular',
      { channel: '', version: '1.1.0' },
    ],
    ['a mandatory module on any channel', spec('always'), 'fast', { channel: 'fast', version: '3.0.0' }],
  ] as const)('resolves on %s', async (_what, m, kymaChannel, expected) => {
    const r = await resolveModule(m, kymaChannel, CATALOG);
    expect(r.failure).toBeUndefined();
    expect(r.module).toMatchObject({ name: m.name, ...expected });
  });

  it.each([
    [
      'an unknown module',
      spec('nosuch'),
      'ModuleNotFound',
      'module "nosuch" is unknown: no ModuleReleaseMeta "nosuch" in namespace "kcp"',
    ],
    [
      'a channel without a version',
      spec('greeter', { channel: 'nightly' }),
      'ChannelNotFound',
      'module "greeter" has no version for channel "nightly" in ModuleReleaseMeta kcp/greeter (channels: regular, fast)',
    ],
    [
      'a version that is no semantic version',
      spec('broken'),
      'InvalidVersion',
      'module "broken": "latest" is not a semantic version',
    ],
    [
      'a missing template',
      spec('ghost'),
      'TemplateNotFound',
      'module "ghost": no ModuleTemplate "ghost-9.9.9" in namespace "kcp" for version 9.9.9 of channel "regular"',
    ],
    [
      'a missing pinned template',
      spec('greeter', { version: '2.0.0' }),
      'TemplateNotFound',
      'module "greeter": no ModuleTemplate "greeter-2.0.0" in namespace "kcp" for pinned version 2.0.0',
    ],
    [
      'a template of another version',
      spec('liar'),
      'TemplateVersionMismatch',
      'ModuleTemplate kcp/liar-2.0.0 describes version 2.0.1, not 2.0.0',
    ],
    [
      'a module name that cannot be a label value',
      spec('Greeter_X'),
      'InvalidModuleName',
      'module name "Greeter_X" cannot be used',
    ],
    [
      'a module name longer than a label value',
      spec('m'.repeat(64)),
      'InvalidModuleName',
      'must be at most 63 characters',
    ],
  ] as const)('refuses %s with a typed reason', async (_what, m, reason, message) => {
    const r = await resolveModule(m, 'regular', CATALOG);
    expect(r.module).toBeUndefined();
    expect(r.failure?.reason).toBe(reason);
    expect(r.failure?.message).toContain(message);
  });

  describe('visibility (beta and internal templates, as upstream)', () => {
    const none = { beta: false, internal: false };
    it.each([
      [
        'a beta template to a Kyma without the beta label',
        spec('preview'),
        none,
        'module "preview": ModuleTemplate kcp/preview-0.1.0 is beta (operator.kyma-project.io/beta: ' +
          '"true"): not available to this Kyma, which lacks that label',
      ],
      [
        'an internal template (checked first) to a beta Kyma',
        spec('staff'),
        { beta: true, internal: false },
        'ModuleTemplate kcp/staff-1.0.0 is internal (operator.kyma-project.io/internal: "true")',
      ],
      [
        'an internal and beta template to an internal Kyma that is not beta',
        spec('staff'),
        { beta: false, internal: true },
        'is beta',
      ],
    ] as const)('refuses %s as ModuleNotVisible', async (_what, m, visibility, message) => {
      const r = await resolveModule(m, 'regular', CATALOG, visibility);
      expect(r.module).toBeUndefined();
      expect(r.failure?.reason).toBe('ModuleNotVisible');
      expect(r.failure?.message).toContain(message);
      expect(r).toMatchObject({ channel: 'regular', version: m.name === 'preview' ? '0.1.0' : '1.0.0' });
    });

    it.each([
      ['a beta template to a beta Kyma', spec('preview'), { beta: true, internal: false }],
      ['an internal beta template to a Kyma with both labels', spec('staff'), { beta: true, internal: true }],
      ['an unlabelled template to any Kyma', spec('greeter'), none],
    ] as const)('serves %s', async (_what, m, visibility) => {
      expect((await resolveModule(m, 'regular', CATALOG, visibility)).failure).toBeUndefined();
    });
  });

  describe('a template whose spec.moduleName names another module', () => {
    it('is resolved all the same, as upstream, and the resolution says which module it names', async () => {
      const r = await resolveModule(spec('twin'), 'regular', CATALOG);
      expect(r.failure).toBeUndefined();
      expect(r.module).toMatchObject({
        name: 'twin',
        version: '1.0.0',
        template: { name: 'twin-1.0.0', namespace: 'kcp', generation: 3 },
        templateModuleName: 'other',
      });
      expect((await resolveModule(spec('greeter'), 'regular', CATALOG)).module).not.toHaveProperty(
        'templateModuleName',
      );
    });

    it('gives one Warning Event per template generation, naming the template, both names and the fix', async () => {
      const twin = (await resolveModule(spec('twin'), 'regular', CATALOG)).module!;
      const first = moduleNameMismatchEvent(twin, undefined);
      expect(first).toEqual({
        type: 'Warning',
        reason: 'ModuleNameMismatch',
        message:
          'module twin: ModuleTemplate kcp/twin-1.0.0 says spec.moduleName "other", not "twin" ' +
          '(generation 3); it is installed as module twin all the same, as upstream does. Set ' +
          "spec.moduleName: twin in the template, or, if it is module other's, publish it as " +
          'other-1.0.0',
      });
      expect(moduleNameMismatchEvent(twin, twin)).toBeUndefined();
      expect(
        moduleNameMismatchEvent({ ...twin, template: { ...twin.template, generation: 4 } }, twin)?.message,
      ).toContain('(generation 4)');
      // Told before this field existed: told once now.
      const { templateModuleName: _, ...told } = twin;
      expect(moduleNameMismatchEvent(twin, told)?.reason).toBe('ModuleNameMismatch');
      const greeter = (await resolveModule(spec('greeter'), 'regular', CATALOG)).module!;
      expect(moduleNameMismatchEvent(greeter, undefined)).toBeUndefined();
    });
  });

  it("resolves over objects already listed (the command line's catalog) as over the worker's reads", async () => {
    const meta: ModuleReleaseMeta = {
      apiVersion: 'operator.kyma-project.io/v1beta2',
      kind: 'ModuleReleaseMeta',
      metadata: { name: 'greeter' },
      spec: {
        moduleName: 'greeter',
        channels: [
          { channel: 'regular', version: '1.0.0' },
          { channel: 'fast', version: '1.2.0' },
        ],
      },
    };
    const template = {
      apiVersion: 'operator.kyma-project.io/v1beta2' as const,
      kind: 'ModuleTemplate' as const,
      metadata: { name: 'greeter-1.0.0', labels: { 'operator.kyma-project.io/beta': 'true' } },
      spec: { version: '1.0.0', descriptor: {} },
    };
    const listed = listedCatalog('kcp', [template], [meta]);
    expect(
      (await resolveModule(spec('greeter'), 'regular', listed, { beta: true, internal: false })).module,
    ).toMatchObject({ version: '1.0.0', template: { name: 'greeter-1.0.0', namespace: 'kcp' } });
    expect(
      (await resolveModule(spec('greeter'), 'regular', listed, { beta: false, internal: false })).failure?.reason,
    ).toBe('ModuleNotVisible');
    expect(await resolveModule(spec('greeter', { channel: 'fast' }), 'regular', listed)).toMatchObject({
      version: '1.2.0',
      failure: { reason: 'TemplateNotFound' },
    });
  });
});
