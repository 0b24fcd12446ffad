// The Catalog tab: the modules on offer, each with its channels, origin and flags, and a button
// that adds it to the Kyma or installs it directly (after saying what that means).
import { addChoice, addRequest, type AddChoice } from './catalog-choice';
import { call } from './call';
import { ask } from './confirm';
import { byId, el, messageOf, say } from './dom';
import { channelOption, originBadge } from './labels';
import type { Catalog, CatalogEntry, Said } from './types';

/** Fills the tab; `added` is called once a module was added. */
export async function showCatalog(added: () => void): Promise<void> {
  const { entries, kyma: exists } = await call<Catalog>('GET', '/api/catalog');
  const advanced = byId<HTMLInputElement>('advanced').checked;
  byId('catalog-rows').replaceChildren(...entries.map((e) => entryRow(e, exists, advanced, added)));
}

function entryRow(e: CatalogEntry, exists: boolean, advanced: boolean, added: () => void): HTMLTableRowElement {
  const channels = Object.keys(e.channels);
  const select = channels.length
    ? el(
        'select',
        { 'aria-label': 'channel of ' + e.name },
        channels.map((c) => {
          const option = channelOption(e, c);
          return el('option', { value: c, title: option.title }, option.text);
        }),
      )
    : undefined;
  const choice = addChoice(e, exists, advanced);
  const add = async () => {
    if (!(await confirmAdd(choice, e.name))) return;
    try {
      const { said } = await call<Said>('POST', '/api/add', addRequest(choice, select ? select.value : ''));
      say(said.join('\n'));
      added();
    } catch (err) {
      say(messageOf(err), true);
    }
  };
  const badge = originBadge(e);
  return el(
    'tr',
    { 'data-entry': e.name, 'data-origin': e.origin },
    el('td', {}, e.icon ? el('img', { class: 'icon', src: e.icon, alt: '' }) : ''),
    el(
      'td',
      {},
      e.documentation ? el('a', { href: e.documentation, target: '_blank', rel: 'noopener' }, e.name) : e.name,
    ),
    el('td', {}, e.versions.join(', ')),
    el('td', {}, select ?? ''),
    el('td', {}, el('span', { class: badge.class }, badge.text)),
    el(
      'td',
      {},
      e.beta ? el('span', { class: 'badge beta' }, 'beta') : '',
      e.internal ? el('span', { class: 'badge internal' }, 'internal') : '',
    ),
    el('td', {}, el('button', { type: 'button', onclick: add }, choice.label)),
  );
}

/** What the user agrees to before a direct install: no support for it. */
function confirmAdd(choice: AddChoice, name: string): Promise<boolean> {
  if (choice.confirm === 'community') {
    const what = el('p', {}, 'Community modules come with no support from the Kyma team.');
    return ask('Install community module ' + name + '?', [what], 'Install');
  }
  if (choice.confirm === 'direct') {
    const what = el(
      'p',
      {},
      'The lifecycle manager will not upgrade, repair or support a module installed directly beside the Kyma.',
    );
    return ask('Install ' + name + ' directly?', [what], 'Install directly');
  }
  return Promise.resolve(true);
}
