// The Modules tab: the Kyma's modules and those klm installed directly, why each is where it is,
// and their deletion (the resources that block it listed first, deleted only when confirmed).
import { call } from './call';
import { ask } from './confirm';
import { byId, el, messageOf, noRows, say } from './dom';
import { blockerText, eventText, kindOf, stateClass, versionsText } from './labels';
import { session } from './session';
import type { Blocker, ModuleRow, Modules, Said, Why } from './types';

/** Fills the tab; `refresh` shows the page again after a deletion. */
export async function showModules(refresh: () => Promise<void>): Promise<void> {
  const { rows, kyma: exists } = await call<Modules>('GET', '/api/modules');
  byId('kyma-note').textContent = exists
    ? ''
    : 'There is no Kyma ' + session.kyma + ': these are the modules klm installed directly.';
  byId('module-rows').replaceChildren(
    ...(rows.length ? rows.map((r) => moduleRow(r, refresh)) : noRows(7, 'No modules.')),
  );
}

function moduleRow(r: ModuleRow, refresh: () => Promise<void>): HTMLTableRowElement {
  const wanted = r.desiredVersion
    ? el(
        'span',
        { class: 'differs', title: 'the version wanted is not the one running yet' },
        ' \u2192 ' + r.desiredVersion,
      )
    : '';
  return el(
    'tr',
    { 'data-module': r.name },
    el('td', {}, r.name),
    el('td', {}, r.version || '-', wanted),
    el('td', {}, r.customResourcePolicy),
    el('td', {}, el('span', { class: 'badge ' + kindOf(r) }, kindOf(r))),
    el('td', {}, r.moduleStatus),
    el('td', {}, el('span', { class: stateClass(r.installationStatus), title: r.message || '' }, r.installationStatus)),
    el(
      'td',
      {},
      el('button', { type: 'button', onclick: () => why(r.name) }, 'Why'),
      el('button', { type: 'button', class: 'danger', onclick: () => remove(r.name, refresh) }, 'Delete'),
    ),
  );
}

async function why(module: string): Promise<void> {
  const w = await call<Why>('GET', '/api/why?module=' + encodeURIComponent(module));
  const box = byId('why');
  box.hidden = false;
  const workflow = w.temporalUi
    ? el('a', { href: w.temporalUi, target: '_blank', rel: 'noopener' }, w.workflowId)
    : w.workflowId;
  box.replaceChildren(
    el('h2', {}, module + ': ', el('span', { class: stateClass(w.state) }, w.state || 'no state yet')),
    w.message ? el('p', {}, w.message) : '',
    el('p', {}, versionsText(w)),
    w.direct
      ? el('p', {}, 'Installed directly by klm from ModuleTemplate ' + w.direct.template + '.')
      : el('p', {}, 'Workflow: ', workflow),
    w.events.length
      ? el(
          'ul',
          {},
          w.events.map((e) => el('li', {}, eventText(e))),
        )
      : '',
  );
}

/** Asks before a deletion: the resources that block it listed first (then they go too). */
function confirmDeletion(module: string, blockers: Blocker[]): Promise<boolean> {
  if (!blockers.length) {
    const what = el('p', {}, 'Its objects and its default CR are deleted.');
    return ask('Delete module ' + module + '?', [what], 'Delete ' + module);
  }
  const why = el(
    'p',
    {},
    'People made these resources of the module\u2019s kinds. The module can go only after they are deleted:',
  );
  const list = el(
    'ul',
    { id: 'blockers' },
    blockers.map((b) => el('li', {}, blockerText(b))),
  );
  const ok = 'Delete these ' + blockers.length + ' resources and the module';
  return ask('Resources of ' + module + ' still exist', [why, list], ok);
}

async function remove(module: string, refresh: () => Promise<void>): Promise<void> {
  try {
    const blockers = await call<Blocker[]>('GET', '/api/blockers?module=' + encodeURIComponent(module));
    if (!(await confirmDeletion(module, blockers))) return say('Nothing deleted.');
    const body = { module, deleteResources: blockers.length > 0 };
    const { said } = await call<Said>('POST', '/api/delete', body);
    say(said.join('\n'));
  } catch (err) {
    say(messageOf(err), true);
  }
  await refresh();
}
