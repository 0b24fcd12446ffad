// The web view's script (bundled into /app.js): the tabs, the Kyma shown, and the live updates the
// server pushes for it. Every call carries the token of the address klm printed.
import { showCatalog } from './catalog-tab';
import { byId, messageOf, say } from './dom';
import { chooseNamespace, listenFleet, showFleet, stopFleet } from './fleet-tab';
import { showModules } from './modules-tab';
import { session } from './session';
import { eventsUrl, pageQuery } from './urls';

const TABS = ['modules', 'catalog', 'fleet'] as const;
type Tab = (typeof TABS)[number];

let source: EventSource | undefined;

function selectTab(name: Tab): void {
  if (name === 'fleet') listenFleet(openFromFleet);
  else stopFleet();
  for (const t of TABS) {
    byId('tab-' + t).setAttribute('aria-selected', String(t === name));
    byId(t).hidden = t !== name;
  }
  void refresh();
}

/** Fills the tab shown. */
async function refresh(): Promise<void> {
  try {
    if (!byId('modules').hidden) await showModules(refresh);
    if (!byId('catalog').hidden) await showCatalog(() => selectTab('modules'));
    if (!byId('fleet').hidden) await showFleet(openFromFleet);
  } catch (err) {
    say(messageOf(err), true);
  }
}

/** Follows the Kyma's changes: the page shows them as they happen. */
function listen(): void {
  source?.close();
  source = new EventSource(eventsUrl(session.kyma, session.token));
  source.addEventListener('changed', () => void refresh());
  source.onopen = () => byId('live').classList.remove('off');
  source.onerror = () => byId('live').classList.add('off');
}

function openKyma(kyma: string): void {
  session.kyma = kyma;
  byId<HTMLInputElement>('kyma').value = kyma;
  history.replaceState(null, '', pageQuery(kyma) + location.hash);
  listen();
  void refresh();
}

function openFromFleet(kyma: string): void {
  openKyma(kyma);
  selectTab('modules');
}

byId('kyma-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  openKyma(byId<HTMLInputElement>('kyma').value.trim());
});
for (const t of TABS) byId('tab-' + t).addEventListener('click', () => selectTab(t));
byId('fleet-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  chooseNamespace(byId<HTMLInputElement>('fleet-namespace').value.trim(), openFromFleet);
  void refresh();
});
byId('advanced').addEventListener('change', () => void refresh());
openKyma(session.kyma);
