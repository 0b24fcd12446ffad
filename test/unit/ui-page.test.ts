// The web page as klm ui serves it (src/cli/ui/page.ts): its HTML and CSS from their files, its
// script bundled from src/cli/ui/app/ for the browser; the build writes the same three files. And
// the server's answers fit what the page reads of them (src/cli/ui/app/types.ts): checked by tsc.
import { readFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { blockersOf, catalogOf, modulesOf, whyOf } from '../../src/cli/ui/api';
import type { fleetOf, rolloutsOf } from '../../src/cli/ui/fleet';
import type * as Page from '../../src/cli/ui/app/types';
import { loadPage, writePage } from '../../src/cli/ui/page';

type Answer<F extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<F>>;

describe('the web page', () => {
  it('is its HTML, its CSS and its script bundled for the browser', async () => {
    const page = await loadPage();
    expect(page.html).toContain('<script src="/app.js"></script>');
    expect(page.html).toContain('<link rel="stylesheet" href="/app.css" />');
    expect(page.css).toContain('.state-Ready');
    // One classic script: no module syntax, nothing left to load.
    expect(page.js).toMatch(/^"use strict";\n\(\(\) => \{/);
    expect(page.js).not.toMatch(/^\s*(import|export)\b/m);
    expect(page.js).not.toMatch(/\brequire\(/);
    for (const module of ['main', 'modules-tab', 'catalog-tab', 'fleet-tab', 'call'])
      expect(page.js).toContain(`// src/cli/ui/app/${module}.ts`);
  });

  it('is written for the build as served', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'klm-page-'));
    await writePage(dir);
    const page = await loadPage();
    expect(await readFile(path.join(dir, 'index.html'), 'utf8')).toBe(page.html);
    expect(await readFile(path.join(dir, 'style.css'), 'utf8')).toBe(page.css);
    expect(await readFile(path.join(dir, 'app.js'), 'utf8')).toBe(page.js);
  });

  it('reads what the server answers', () => {
    expectTypeOf<Answer<typeof modulesOf>>().toExtend<Page.Modules>();
    expectTypeOf<Answer<typeof whyOf>>().toExtend<Page.Why>();
    expectTypeOf<Answer<typeof blockersOf>>().toExtend<Page.Blocker[]>();
    expectTypeOf<Answer<typeof catalogOf>>().toExtend<Page.Catalog>();
    expectTypeOf<Answer<typeof fleetOf>>().toExtend<Page.Fleet>();
    expectTypeOf<Answer<typeof rolloutsOf>>().toExtend<Page.ChannelRollout[]>();
  });
});
