// klm ui in a real headless Chromium (Debian's, driven by playwright-core) against the local
// stack, as a person uses it: browse the catalog, add a managed module and watch it become Ready
// without reloading, install a community module directly, try to delete a module whose resources
// block it, see them listed, delete them through the page, and see the module go; the fleet by
// state, the modules in Error, a rollout paused and aborted with a reason. The page's
// calls need the token of the address klm printed. KLM_SCREENSHOTS=docs/images keeps the
// screenshots docs/user/web-view.md shows.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM } from '../../src/localstack/tools';
import { echoTemplates } from '../support/community';
import { API_VERSION } from '../../src/api/shared';
import { eventually, kymaInState, kymaObject, useKlm } from '../support/klm';
import { processEnv } from '../support/processes';
import { stackInfo, uniqueName } from '../support/stack';

describe('klm ui', () => {
  // A promotion of regular rolls one Kyma, then soaks long enough to be steered from the page.
  const klm = useKlm({ rolloutPolicy: { regular: 'waves: [1]\nsoak: 10m' } });
  const kymaName = uniqueName('kyma');
  const community = uniqueName('community');
  const direct = uniqueName('direct');
  const group = `${uniqueName('echo')}.example.io`;
  let ui: ChildProcess;
  let url: string;
  let browser: Browser;
  let page: Page;
  let shots: string;

  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  };
  const row = (module: string) => page.locator(`#module-rows tr[data-module="${module}"]`);

  beforeAll(async () => {
    shots = process.env.KLM_SCREENSHOTS ?? (await mkdtemp(path.join(tmpdir(), 'klm-ui-')));
    await mkdir(shots, { recursive: true });
    await klm().kube.create(kymaObject(klm().namespace, kymaName, { channel: 'regular', modules: [] }));
    klm().manager.watch(`${group}/v1alpha1`, 'Echo');
    await klm().kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: community } });
    for (const t of await echoTemplates(stackInfo().registryHost, group, direct))
      await klm().kube.create({ ...t, metadata: { ...t.metadata, namespace: community } });
    ui = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/klm.ts',
        'ui',
        '--kubeconfig',
        stackInfo().kubeconfig,
        '--kyma',
        `${klm().namespace}/${kymaName}`,
        '--direct-namespace',
        direct,
        '--port',
        '0',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'], env: processEnv(klm(), { DOCKER_CONFIG: '/nonexistent' }) },
    );
    let out = '';
    ui.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    url = await eventually(
      'klm ui to print its address',
      () => Promise.resolve(/open (http:\/\/\S+)/.exec(out)?.[1]),
      60_000,
    );
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  });
  afterAll(async () => {
    await browser?.close();
    ui?.kill('SIGTERM');
    await klm().kube.delete('apiextensions.k8s.io/v1', 'CustomResourceDefinition', `echoes.${group}`);
  });

  it('answers no call without the token of the address it printed, nor to another Host', async () => {
    const base = new URL(url);
    const api = `${base.origin}/api/modules?kyma=${encodeURIComponent(`${klm().namespace}/${kymaName}`)}`;
    expect((await fetch(api)).status).toBe(403);
    expect((await fetch(api, { headers: { 'X-KLM-Token': 'guess' } })).status).toBe(403);
    const token = new URLSearchParams(base.hash.slice(1)).get('token')!;
    expect((await fetch(api, { headers: { 'X-KLM-Token': token } })).status).toBe(200);
    expect((await fetch(api.replace('127.0.0.1', 'localhost'), { headers: { 'X-KLM-Token': token } })).status).toBe(
      200,
    );
  });

  it('shows the catalog, adds a managed module and shows it becoming Ready as it happens', async () => {
    await page.goto(url);
    await expect.poll(() => page.locator('#module-rows').innerText()).toContain('No modules.');
    await page.click('#tab-catalog');
    const greeter = page.locator('#catalog-rows tr[data-entry="greeter"][data-origin="kyma"]');
    await expect.poll(() => greeter.innerText()).toContain('1.0.0, 1.1.0');
    expect(await page.locator(`#catalog-rows tr[data-origin="${community}/echo-1.0.0"]`).innerText()).toContain(
      'community',
    );
    await shot('ui-catalog');
    await greeter.locator('button').click();
    await expect
      .poll(() => page.locator('#status').innerText())
      .toContain(`module greeter added to Kyma ${klm().namespace}/${kymaName}`);
    // No reload: the page hears of the change from the server's watches.
    await expect.poll(() => row('greeter').locator('.state').innerText(), { timeout: 120_000 }).toBe('Ready');
    expect(await row('greeter').innerText()).toContain('managed');
  });

  it('installs a community module directly after saying it has no support', async () => {
    await page.click('#tab-catalog');
    await page.locator(`#catalog-rows tr[data-origin="${community}/echo-1.0.0"] button`).click();
    await expect.poll(() => page.locator('#confirm-body').innerText()).toContain('no support from the Kyma team');
    await page.click('#confirm-ok');
    await expect
      .poll(() => page.locator('#status').innerText(), { timeout: 60_000 })
      .toContain(`module echo 1.0.0 installed directly into namespace ${direct}`);
    await expect.poll(() => row('echo').locator('.state').innerText(), { timeout: 120_000 }).toBe('Ready');
    expect(await row('echo').innerText()).toContain('community');
    await shot('ui-modules');
  });

  it('lists what blocks a deletion, deletes it through the page, and the module goes', async () => {
    await klm().kube.create({
      apiVersion: 'greeter.example.io/v1alpha1',
      kind: 'Greeter',
      metadata: { name: 'mine', namespace: `${kymaName}-system` },
      spec: {},
    });
    await row('greeter').locator('button', { hasText: 'Delete' }).click();
    await expect.poll(() => page.locator('#blockers').innerText()).toContain(`Greeter ${kymaName}-system/mine`);
    await shot('ui-delete-blocked');
    await page.click('#confirm-ok');
    await expect
      .poll(() => page.locator('#status').innerText(), { timeout: 60_000 })
      .toContain(`module greeter removed from Kyma ${klm().namespace}/${kymaName}`);
    await eventually(
      'the blocking Greeter to be gone',
      async () =>
        (await klm().kube.get('greeter.example.io/v1alpha1', 'Greeter', 'mine', `${kymaName}-system`)) === undefined ||
        undefined,
    );
    await expect.poll(() => row('greeter').count(), { timeout: 120_000 }).toBe(0);
    expect(await row('echo').count()).toBe(1);
  });

  it('shows the fleet by state with the modules in Error, and pauses a rollout with a reason', async () => {
    const ns = klm().namespace;
    const [broken, a, b] = [uniqueName('broken'), uniqueName('fleet'), uniqueName('fleet')];
    await klm().kube.create(kymaObject(ns, broken, { channel: 'regular', modules: [{ name: 'nosuch' }] }));
    for (const k of [a, b])
      await klm().kube.create(kymaObject(ns, k, { channel: 'regular', modules: [{ name: 'greeter' }] }));
    await kymaInState(klm(), broken, 'Error');
    for (const k of [a, b]) await kymaInState(klm(), k, 'Ready');
    await page.click('#tab-fleet');
    await expect.poll(() => page.locator('#fleet-counts button[data-state="Error"]').innerText()).toContain('Error 1');
    await page.click('#fleet-counts button[data-state="Error"]');
    await expect.poll(() => page.locator('#fleet-kymas tr').count()).toBe(1);
    expect(await page.locator('#fleet-kymas').innerText()).toContain(broken);
    expect(await page.locator(`#fleet-errors tr[data-kyma="${broken}"][data-module="nosuch"]`).count()).toBe(1);

    await klm().kube.mergePatch(API_VERSION, 'ModuleReleaseMeta', 'greeter', ns, {
      spec: {
        channels: [
          { channel: 'regular', version: '1.1.0' },
          { channel: 'fast', version: '1.1.0' },
        ],
      },
    });
    const greeter = page.locator('#rollouts tr[data-rollout="greeter/regular"]');
    // Live: the page hears of the promotion and of the Kymas moving.
    await expect
      .poll(
        () =>
          greeter
            .locator('.phase')
            .innerText()
            .catch(() => ''),
        { timeout: 90_000 },
      )
      .toMatch(/Rolling|Soaking/);
    await greeter.locator('button', { hasText: 'Pause' }).click();
    await page.fill('#reason', 'checking the first Kyma');
    await page.click('#confirm-ok');
    await expect
      .poll(() => page.locator('#status').innerText(), { timeout: 30_000 })
      .toContain('greeter on regular: Paused');
    await expect.poll(() => greeter.locator('.phase').innerText()).toBe('Paused');
    await page.click('#fleet-counts button:first-child');
    await expect.poll(() => page.locator('#fleet-kymas tr').count()).toBe(4);
    await shot('ui-fleet');
    await greeter.locator('button', { hasText: 'Abort' }).click();
    await page.fill('#reason', 'test over');
    await page.click('#confirm-ok');
    await expect.poll(() => greeter.locator('.phase').innerText(), { timeout: 30_000 }).toBe('Aborted');
  });
});
