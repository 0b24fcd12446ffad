// Where an OCM component and its local blobs are, as upstream's lifecycle-manager finds them
// (internal/setup/ociregistry.go, internal/repository/ocm/repo.go, internal/manifest/img/parse.go).
import { describe, expect, it } from 'vitest';
import {
  blobLocation,
  componentLocation,
  configuredComponentLocation,
  DescriptorError,
  namesComponent,
} from '../../src/oci/ocm';

const C = 'kyma-project.io/module/greeter';

describe('configuredComponentLocation (descriptor: {})', () => {
  it.each<[string, { host: string; subPath?: string }, string, string]>([
    ['a bare host', { host: '127.0.0.1:5000' }, '127.0.0.1:5000', `component-descriptors/${C}`],
    ['a host with a scheme', { host: 'http://127.0.0.1:5000/' }, '127.0.0.1:5000', `component-descriptors/${C}`],
    [
      'a host with a path',
      { host: 'europe-docker.pkg.dev/kyma/prod' },
      'europe-docker.pkg.dev',
      `kyma/prod/component-descriptors/${C}`,
    ],
    [
      'a subpath',
      { host: 'https://reg.example.io', subPath: '/modules/' },
      'reg.example.io',
      `modules/component-descriptors/${C}`,
    ],
    [
      'a host path and a subpath',
      { host: 'reg.example.io/a', subPath: 'b/c' },
      'reg.example.io',
      `a/b/c/component-descriptors/${C}`,
    ],
  ])('%s', (_what, registry, host, repository) => {
    expect(configuredComponentLocation(registry, C, '1.0.0', 'here')).toEqual({
      registry: host,
      repository,
      component: C,
      version: '1.0.0',
    });
  });

  it('fails typed without a registry', () => {
    const err = (() => {
      try {
        configuredComponentLocation({ host: ' ' }, C, '1.0.0', 'here');
      } catch (e) {
        return e;
      }
    })() as DescriptorError;
    expect(err).toBeInstanceOf(DescriptorError);
    expect(err.reason).toBe('OciRegistryNotConfigured');
  });
});

describe('componentLocation and blobLocation (descriptors that name the component)', () => {
  const named = (ctx: Record<string, unknown>[]) => ({
    component: { name: C, version: '1.1.0', repositoryContexts: ctx },
  });

  it('tells {} from a descriptor that names its component, and does not take one that names it in part for {}', () => {
    expect(namesComponent({})).toBe(false);
    expect(namesComponent(undefined)).toBe(false);
    expect(namesComponent(named([]))).toBe(true);
    expect(namesComponent({ component: { name: C } })).toBe(true);
  });

  it.each([
    [
      'no version',
      { component: { name: C, repositoryContexts: [{ baseUrl: 'reg.example.io' }] } },
      'component.version',
    ],
    ['no name', { component: { version: '1.1.0' } }, 'component.name'],
    ['neither', { component: {} }, 'component.name and component.version'],
  ])('names what a descriptor in the template lacks: %s', (_what, descriptor, missing) => {
    const err = (() => {
      try {
        componentLocation(descriptor, 'ModuleTemplate kcp/greeter-1.1.0');
      } catch (e) {
        return e;
      }
    })() as DescriptorError;
    expect(err).toBeInstanceOf(DescriptorError);
    expect(err.reason).toBeUndefined(); // MalformedDescriptor
    expect(err.message).toBe(
      `ModuleTemplate kcp/greeter-1.1.0: its spec.descriptor lacks ${missing}: a descriptor in ` +
        `the template names its OCM component by component.name and component.version (with ` +
        `repositoryContexts); or make it {} to have the component found through the ` +
        `ModuleReleaseMeta's spec.ocmComponentName at the template's spec.version`,
    );
    expect(err.message).not.toContain('not found in the registry');
  });

  it('uses the last repository context, with its subPath', () => {
    const loc = componentLocation(
      named([
        { type: 'OCIRegistry', baseUrl: 'old.example.io' },
        { type: 'OCIRegistry', baseUrl: 'reg.example.io', subPath: 'mods', componentNameMapping: 'urlPath' },
      ]),
      'here',
    );
    expect(loc).toEqual({
      registry: 'reg.example.io',
      repository: `mods/component-descriptors/${C}`,
      component: C,
      version: '1.1.0',
    });
  });

  it('knows the sha256-digest name mapping and refuses others', () => {
    expect(
      componentLocation(named([{ baseUrl: 'reg.example.io', componentNameMapping: 'sha256-digest' }]), 'here')
        .repository,
    ).toMatch(/^[0-9a-f]{64}$/);
    expect(() =>
      componentLocation(named([{ baseUrl: 'reg.example.io', componentNameMapping: 'other' }]), 'here'),
    ).toThrow(/componentNameMapping "other"/);
  });

  it("finds local blobs by the pulled descriptor's context, else where the descriptor was found", () => {
    const found = configuredComponentLocation({ host: 'mirror.example.io' }, C, '1.1.0', 'here');
    expect(blobLocation(named([{ baseUrl: 'reg.example.io', subPath: 'x' }]), found, 'here').repository).toBe(
      `x/component-descriptors/${C}`,
    );
    expect(blobLocation(named([]), found, 'here')).toEqual(found);
  });
});
