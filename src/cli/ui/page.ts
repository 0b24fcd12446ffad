// The web view's page: plain HTML, CSS and JavaScript, bundled with klm (no CDN, no build step,
// no framework: the page is small). It reads its token from the URL's fragment (never sent to a
// server, never in a Referer) and sends it with every call.
export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>klm: modules</title>
<link rel="stylesheet" href="/app.css">
</head>
<body>
<header>
  <h1>klm</h1>
  <form id="kyma-form">
    <label for="kyma">Kyma</label>
    <input id="kyma" name="kyma" placeholder="namespace/name" autocomplete="off" required>
    <button type="submit">Open</button>
  </form>
  <span id="live" class="live" title="live updates">&#9679; live</span>
</header>
<nav role="tablist">
  <button role="tab" id="tab-modules" aria-controls="modules" aria-selected="true">Modules</button>
  <button role="tab" id="tab-catalog" aria-controls="catalog" aria-selected="false">Catalog</button>
  <button role="tab" id="tab-fleet" aria-controls="fleet" aria-selected="false">Fleet</button>
</nav>
<p id="status" role="status" aria-live="polite"></p>
<main>
  <section id="modules" role="tabpanel" aria-labelledby="tab-modules">
    <p id="kyma-note" class="note"></p>
    <table>
      <thead><tr><th>Name</th><th>Version</th><th>CR policy</th><th>Kind</th><th>Module status</th><th>Installation status</th><th>Actions</th></tr></thead>
      <tbody id="module-rows"></tbody>
    </table>
    <section id="why" hidden aria-live="polite"></section>
  </section>
  <section id="catalog" role="tabpanel" aria-labelledby="tab-catalog" hidden>
    <label class="advanced"><input type="checkbox" id="advanced"> Advanced: install a managed module directly (the lifecycle manager will not upgrade, repair or support it)</label>
    <table>
      <thead><tr><th></th><th>Name</th><th>Versions</th><th>Channels</th><th>Origin</th><th>Flags</th><th>Add</th></tr></thead>
      <tbody id="catalog-rows"></tbody>
    </table>
  </section>
  <section id="fleet" role="tabpanel" aria-labelledby="tab-fleet" hidden>
    <form id="fleet-form" class="inline">
      <label for="fleet-namespace">Namespace</label> <input id="fleet-namespace" autocomplete="off" required> <button type="submit">Show</button>
    </form>
    <div id="fleet-counts" role="group" aria-label="filter by state"></div>
    <h2>Kymas</h2>
    <table>
      <thead><tr><th>Kyma</th><th>State</th><th>Channel</th><th>Modules</th><th>In Error</th></tr></thead>
      <tbody id="fleet-kymas"></tbody>
    </table>
    <h2>Modules in Error</h2>
    <table>
      <thead><tr><th>Kyma</th><th>Module</th><th>Message</th></tr></thead>
      <tbody id="fleet-errors"></tbody>
    </table>
    <h2>Rollouts</h2>
    <table>
      <thead><tr><th>Module</th><th>Channel</th><th>Version</th><th>Phase</th><th>Waves (done/size)</th><th>Steer</th></tr></thead>
      <tbody id="rollouts"></tbody>
    </table>
  </section>
</main>
<dialog id="confirm">
  <form method="dialog">
    <h2 id="confirm-title"></h2>
    <div id="confirm-body"></div>
    <label id="reason-label" hidden>Reason <input id="reason" autocomplete="off"></label>
    <menu><button value="cancel" id="confirm-cancel">Cancel</button> <button value="ok" id="confirm-ok" class="danger"></button></menu>
  </form>
</dialog>
<script src="/app.js"></script>
</body>
</html>
`;

export const APP_CSS = `
:root { font-family: system-ui, sans-serif; color: #1d2733; background: #f6f8fa; }
body { margin: 0; }
header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1.2rem; background: #0b3b60; color: #fff; }
header h1 { font-size: 1.2rem; margin: 0; }
header form { display: flex; gap: .4rem; align-items: center; }
header input { width: 18rem; padding: .3rem; }
.live { margin-left: auto; color: #8fd19e; font-size: .85rem; }
.live.off { color: #f0a0a0; }
nav { display: flex; gap: .2rem; padding: .4rem 1.2rem 0; }
nav button { border: 0; padding: .5rem 1rem; background: #dde4ea; cursor: pointer; border-radius: .3rem .3rem 0 0; }
nav button[aria-selected="true"] { background: #fff; font-weight: 600; }
main { background: #fff; margin: 0 1.2rem 1.2rem; padding: 1rem; border-radius: 0 .3rem .3rem .3rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #e3e8ee; vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; color: #566; }
.state { font-weight: 600; }
.state-Ready { color: #1a7f37; } .state-Error { color: #cf222e; } .state-Warning { color: #9a6700; }
.state-Processing, .state-Deleting, .state-Pending { color: #0969da; }
.differs { background: #fff3cd; padding: 0 .25rem; border-radius: .2rem; }
.badge { display: inline-block; font-size: .75rem; padding: 0 .35rem; border-radius: .6rem; background: #e3e8ee; margin-right: .2rem; }
.badge.community { background: #fde2c8; } .badge.beta { background: #dbe9ff; } .badge.internal { background: #eadcff; }
.note { color: #566; }
#status { margin: .4rem 1.2rem; min-height: 1.2rem; white-space: pre-line; }
#status.error { color: #cf222e; }
button.danger { background: #cf222e; color: #fff; border: 0; padding: .35rem .8rem; border-radius: .3rem; }
td button { margin-right: .3rem; }
.advanced { display: block; margin-bottom: .6rem; }
img.icon { width: 1.4rem; height: 1.4rem; }
#why { margin-top: 1rem; padding: .8rem; background: #f6f8fa; border-radius: .3rem; }
dialog { border: 1px solid #ccd; border-radius: .4rem; max-width: 40rem; }
#fleet-counts { margin: .6rem 0; display: flex; gap: .4rem; }
#fleet-counts button[aria-pressed="true"] { outline: 2px solid #0b3b60; }
#fleet h2 { font-size: 1rem; margin: 1rem 0 .3rem; }
button:focus-visible, input:focus-visible { outline: 2px solid #0969da; outline-offset: 2px; }
`;

export const APP_JS = String.raw`
'use strict';
const token = new URLSearchParams(location.hash.slice(1)).get('token') || '';
const params = new URLSearchParams(location.search);
const $ = (id) => document.getElementById(id);
let kyma = params.get('kyma') || 'kyma-system/default';
let source;

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) e.append(c instanceof Node ? c : String(c));
  return e;
}

function say(text, error) {
  $('status').textContent = text;
  $('status').className = error ? 'error' : '';
}

async function call(method, path, body) {
  const res = await fetch(path + (path.includes('?') ? '&' : '?') + 'kyma=' + encodeURIComponent(kyma), {
    method,
    headers: { 'X-KLM-Token': token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function ask(title, body, ok, withReason) {
  $('reason-label').hidden = !withReason;
  $('reason').value = '';
  $('confirm-title').textContent = title;
  $('confirm-body').replaceChildren(...body);
  $('confirm-ok').textContent = ok;
  const d = $('confirm');
  d.showModal();
  return new Promise((resolve) => d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true }));
}

function kindOf(r) {
  if (r.direct) return r.direct.community ? 'community' : 'direct';
  return r.managed ? 'managed' : 'unmanaged';
}

async function showModules() {
  const { rows, kyma: exists } = await call('GET', '/api/modules');
  $('kyma-note').textContent = exists ? '' : 'There is no Kyma ' + kyma + ': these are the modules klm installed directly.';
  $('module-rows').replaceChildren(...(rows.length ? rows.map((r) => el('tr', { 'data-module': r.name },
    el('td', {}, r.name),
    el('td', {}, r.version || '-', r.desiredVersion ? el('span', { class: 'differs', title: 'the version wanted is not the one running yet' }, ' \u2192 ' + r.desiredVersion) : ''),
    el('td', {}, r.customResourcePolicy),
    el('td', {}, el('span', { class: 'badge ' + kindOf(r) }, kindOf(r))),
    el('td', {}, r.moduleStatus),
    el('td', {}, el('span', { class: 'state state-' + r.installationStatus, title: r.message || '' }, r.installationStatus)),
    el('td', {},
      el('button', { type: 'button', onclick: () => why(r.name) }, 'Why'),
      el('button', { type: 'button', class: 'danger', onclick: () => remove(r.name) }, 'Delete')),
  )) : [el('tr', {}, el('td', { colspan: 7, class: 'note' }, 'No modules.'))]));
}

async function why(module) {
  const w = await call('GET', '/api/why?module=' + encodeURIComponent(module));
  const box = $('why');
  box.hidden = false;
  box.replaceChildren(
    el('h2', {}, module + ': ', el('span', { class: 'state state-' + (w.state || '') }, w.state || 'no state yet')),
    w.message ? el('p', {}, w.message) : '',
    el('p', {}, 'Installed: ' + (w.installedVersion || '-') + '; wanted: ' + (w.desiredVersion || '-') + (w.channel ? ' (channel ' + w.channel + ')' : '')),
    w.direct ? el('p', {}, 'Installed directly by klm from ModuleTemplate ' + w.direct.template + '.') : el('p', {}, 'Workflow: ', w.temporalUi ? el('a', { href: w.temporalUi, target: '_blank', rel: 'noopener' }, w.workflowId) : w.workflowId),
    w.events && w.events.length ? el('ul', {}, w.events.map((e) => el('li', {}, (e.lastTimestamp || '') + ' ' + e.reason + ': ' + e.message))) : '',
  );
}

async function remove(module) {
  try {
    const blockers = await call('GET', '/api/blockers?module=' + encodeURIComponent(module));
    let deleteResources = false;
    if (blockers.length) {
      const list = el('ul', { id: 'blockers' }, blockers.map((b) => el('li', {}, b.kind + ' ' + (b.namespace ? b.namespace + '/' : '') + b.name)));
      if (!(await ask('Resources of ' + module + ' still exist', [el('p', {}, 'People made these resources of the module\u2019s kinds. The module can go only after they are deleted:'), list], 'Delete these ' + blockers.length + ' resources and the module'))) return say('Nothing deleted.');
      deleteResources = true;
    } else if (!(await ask('Delete module ' + module + '?', [el('p', {}, 'Its objects and its default CR are deleted.')], 'Delete ' + module))) return say('Nothing deleted.');
    const { said } = await call('POST', '/api/delete', { module, deleteResources });
    say(said.join('\n'));
  } catch (err) {
    say(err.message, true);
  }
  await refresh();
}

async function showCatalog() {
  const { entries, kyma: exists } = await call('GET', '/api/catalog');
  const advanced = $('advanced').checked;
  $('catalog-rows').replaceChildren(...entries.map((e) => {
    const community = e.origin !== 'kyma';
    const channels = Object.keys(e.channels);
    const problem = (c) => e.channelProblems && e.channelProblems[c];
    const select = channels.length ? el('select', { 'aria-label': 'channel of ' + e.name }, channels.map((c) => el('option', { value: c, title: problem(c) ? problem(c).message : undefined }, c + ' (' + e.channels[c] + (problem(c) ? ': ' + problem(c).reason : '') + ')'))) : '';
    const direct = community || !exists || advanced;
    const label = community ? 'Install (community)' : exists && !direct ? 'Add to Kyma' : 'Install directly';
    const add = async () => {
      if (community && !(await ask('Install community module ' + e.name + '?', [el('p', {}, 'Community modules come with no support from the Kyma team.')], 'Install'))) return;
      if (!community && exists && direct && !(await ask('Install ' + e.name + ' directly?', [el('p', {}, 'The lifecycle manager will not upgrade, repair or support a module installed directly beside the Kyma.')], 'Install directly'))) return;
      try {
        const { said } = await call('POST', '/api/add', { module: community ? e.origin : e.name, ...(select && select.value ? { channel: select.value } : {}), ...(direct && !community && exists ? { direct: true } : {}) });
        say(said.join('\n'));
        selectTab('modules');
      } catch (err) {
        say(err.message, true);
      }
    };
    return el('tr', { 'data-entry': e.name, 'data-origin': e.origin },
      el('td', {}, e.icon ? el('img', { class: 'icon', src: e.icon, alt: '' }) : ''),
      el('td', {}, e.documentation ? el('a', { href: e.documentation, target: '_blank', rel: 'noopener' }, e.name) : e.name),
      el('td', {}, e.versions.join(', ')),
      el('td', {}, select),
      el('td', {}, el('span', { class: 'badge' + (community ? ' community' : '') }, community ? 'community ' + e.origin : 'managed')),
      el('td', {}, e.beta ? el('span', { class: 'badge beta' }, 'beta') : '', e.internal ? el('span', { class: 'badge internal' }, 'internal') : ''),
      el('td', {}, el('button', { type: 'button', onclick: add }, label)),
    );
  }));
}

let fleetNamespace = '';
let stateFilter = '';
let fleetSource;

async function showFleet() {
  if (!fleetNamespace) fleetNamespace = kyma.split('/')[0];
  $('fleet-namespace').value = fleetNamespace;
  const ns = '?namespace=' + encodeURIComponent(fleetNamespace);
  const [fleet, rollouts] = await Promise.all([call('GET', '/api/fleet' + ns), call('GET', '/api/rollouts' + ns).catch((err) => [{ module: '-', channel: '-', problem: err.message }])]);
  $('fleet-counts').replaceChildren(
    el('button', { type: 'button', 'aria-pressed': String(!stateFilter), onclick: () => { stateFilter = ''; void showFleet(); } }, 'All ' + fleet.kymas.length),
    ...Object.entries(fleet.counts).sort().map(([state, n]) => el('button', { type: 'button', 'data-state': state, 'aria-pressed': String(stateFilter === state), onclick: () => { stateFilter = state; void showFleet(); } }, el('span', { class: 'state state-' + state }, state), ' ' + n)),
  );
  const shown = fleet.kymas.filter((k) => !stateFilter || k.state === stateFilter);
  $('fleet-kymas').replaceChildren(...(shown.length ? shown.map((k) => el('tr', { 'data-kyma': k.name },
    el('td', {}, el('a', { href: '#', onclick: (ev) => { ev.preventDefault(); openKyma(fleet.namespace + '/' + k.name); selectTab('modules'); } }, k.name)),
    el('td', {}, el('span', { class: 'state state-' + k.state }, k.state)),
    el('td', {}, k.channel), el('td', {}, k.modules), el('td', {}, k.errors || ''),
  )) : [el('tr', {}, el('td', { colspan: 5, class: 'note' }, 'No Kymas.'))]));
  $('fleet-errors').replaceChildren(...(fleet.errors.length ? fleet.errors.map((e) => el('tr', { 'data-kyma': e.kyma, 'data-module': e.module }, el('td', {}, e.kyma), el('td', {}, e.module), el('td', {}, e.message))) : [el('tr', {}, el('td', { colspan: 3, class: 'note' }, 'None.'))]));
  $('rollouts').replaceChildren(...(rollouts.length ? rollouts.map((r) => {
    const p = r.progress;
    const steer = (action) => async () => {
      if (!(await ask(action[0].toUpperCase() + action.slice(1) + ' the rollout of ' + r.module + ' on ' + r.channel + '?', [el('p', {}, 'The reason is recorded with the rollout.')], action, true))) return;
      try {
        const done = await call('POST', '/api/rollout' + ns, { module: r.module, channel: r.channel, action, reason: $('reason').value });
        say(r.module + ' on ' + r.channel + ': ' + done.phase + ' (' + done.message + ')');
      } catch (err) {
        say(err.message, true);
      }
      await showFleet();
    };
    return el('tr', { 'data-rollout': r.module + '/' + r.channel },
      el('td', {}, r.module), el('td', {}, r.channel),
      el('td', {}, p ? (p.version || '-') + (p.from ? ' (from ' + p.from + ')' : '') : '-'),
      el('td', {}, p ? el('span', { class: 'phase', title: p.message }, p.phase) : el('span', { class: 'note' }, r.problem)),
      el('td', {}, p ? p.waves.map((w) => w.done + '/' + w.size).join('  ') : ''),
      el('td', {}, p ? [el('button', { type: 'button', onclick: steer('pause') }, 'Pause'), el('button', { type: 'button', onclick: steer('resume') }, 'Resume'), el('button', { type: 'button', class: 'danger', onclick: steer('abort') }, 'Abort')] : ''),
    );
  }) : [el('tr', {}, el('td', { colspan: 6, class: 'note' }, 'No channels.'))]));
}

function listenFleet() {
  if (fleetSource) fleetSource.close();
  fleetSource = new EventSource('/api/fleet-events?namespace=' + encodeURIComponent(fleetNamespace || kyma.split('/')[0]) + '&token=' + encodeURIComponent(token));
  fleetSource.addEventListener('changed', () => { if (!$('fleet').hidden) void showFleet().catch((err) => say(err.message, true)); });
}

function selectTab(name) {
  if (name === 'fleet') listenFleet();
  else if (fleetSource) { fleetSource.close(); fleetSource = undefined; }
  for (const t of ['modules', 'catalog', 'fleet']) {
    $('tab-' + t).setAttribute('aria-selected', String(t === name));
    $(t).hidden = t !== name;
  }
  void refresh();
}

async function refresh() {
  try {
    if (!$('modules').hidden) await showModules();
    if (!$('catalog').hidden) await showCatalog();
    if (!$('fleet').hidden) await showFleet();
  } catch (err) {
    say(err.message, true);
  }
}

function listen() {
  if (source) source.close();
  source = new EventSource('/api/events?kyma=' + encodeURIComponent(kyma) + '&token=' + encodeURIComponent(token));
  source.addEventListener('changed', () => void refresh());
  source.onopen = () => $('live').classList.remove('off');
  source.onerror = () => $('live').classList.add('off');
}

function openKyma(value) {
  kyma = value;
  $('kyma').value = kyma;
  history.replaceState(null, '', '?kyma=' + encodeURIComponent(kyma) + location.hash);
  listen();
  void refresh();
}

$('kyma-form').addEventListener('submit', (ev) => { ev.preventDefault(); openKyma($('kyma').value.trim()); });
$('tab-modules').addEventListener('click', () => selectTab('modules'));
$('tab-catalog').addEventListener('click', () => selectTab('catalog'));
$('tab-fleet').addEventListener('click', () => selectTab('fleet'));
$('fleet-form').addEventListener('submit', (ev) => { ev.preventDefault(); fleetNamespace = $('fleet-namespace').value.trim(); stateFilter = ''; listenFleet(); void refresh(); });
$('advanced').addEventListener('change', () => void refresh());
openKyma(kyma);
`;
