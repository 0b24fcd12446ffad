// The Fleet tab, for operators: a namespace's Kymas by state (filtered by a click on a state),
// the modules in Error across them, and each channel's rollout, paused, resumed or aborted with a
// reason. It follows the namespace's changes while it is shown.
import { call } from './call';
import { ask, reasonGiven } from './confirm';
import { byId, el, messageOf, noRows, say } from './dom';
import { shownKymas, stateCounts } from './fleet-filter';
import { rolloutVersion, stateClass, steerQuestion, wavesText } from './labels';
import { session } from './session';
import type { ChannelRollout, Fleet, FleetKyma, SteerAction } from './types';
import { fleetEventsUrl, namespaceOf } from './urls';

/** Opens a Kyma of the fleet in the Modules tab. */
export type OpenKyma = (kyma: string) => void;

let fleetNamespace = '';
let stateFilter = '';
let fleetSource: EventSource | undefined;

export async function showFleet(open: OpenKyma): Promise<void> {
  if (!fleetNamespace) fleetNamespace = namespaceOf(session.kyma);
  byId<HTMLInputElement>('fleet-namespace').value = fleetNamespace;
  const ns = '?namespace=' + encodeURIComponent(fleetNamespace);
  const [fleet, rollouts] = await Promise.all([
    call<Fleet>('GET', '/api/fleet' + ns),
    call<ChannelRollout[]>('GET', '/api/rollouts' + ns).catch((err: unknown): ChannelRollout[] => [
      { module: '-', channel: '-', problem: messageOf(err) },
    ]),
  ]);
  const filter = (state: string) => () => {
    stateFilter = state;
    void showFleet(open);
  };
  byId('fleet-counts').replaceChildren(
    el(
      'button',
      { type: 'button', 'aria-pressed': String(!stateFilter), onclick: filter('') },
      'All ' + fleet.kymas.length,
    ),
    ...stateCounts(fleet.counts).map(([state, n]) =>
      el(
        'button',
        { type: 'button', 'data-state': state, 'aria-pressed': String(stateFilter === state), onclick: filter(state) },
        el('span', { class: stateClass(state) }, state),
        ' ' + n,
      ),
    ),
  );
  const shown = shownKymas(fleet.kymas, stateFilter);
  byId('fleet-kymas').replaceChildren(
    ...(shown.length ? shown.map((k) => kymaRow(k, fleet.namespace, open)) : noRows(5, 'No Kymas.')),
  );
  byId('fleet-errors').replaceChildren(...(fleet.errors.length ? fleet.errors.map(errorRow) : noRows(3, 'None.')));
  byId('rollouts').replaceChildren(
    ...(rollouts.length ? rollouts.map((r) => rolloutRow(r, ns, open)) : noRows(6, 'No channels.')),
  );
}

function kymaRow(k: FleetKyma, namespace: string, open: OpenKyma): HTMLTableRowElement {
  const show = (ev: Event) => {
    ev.preventDefault();
    open(namespace + '/' + k.name);
  };
  return el(
    'tr',
    { 'data-kyma': k.name },
    el('td', {}, el('a', { href: '#', onclick: show }, k.name)),
    el('td', {}, el('span', { class: stateClass(k.state) }, k.state)),
    el('td', {}, k.channel),
    el('td', {}, k.modules),
    el('td', {}, k.errors || ''),
  );
}

function errorRow(e: Fleet['errors'][number]): HTMLTableRowElement {
  return el(
    'tr',
    { 'data-kyma': e.kyma, 'data-module': e.module },
    el('td', {}, e.kyma),
    el('td', {}, e.module),
    el('td', {}, e.message),
  );
}

function rolloutRow(r: ChannelRollout, ns: string, open: OpenKyma): HTMLTableRowElement {
  const p = r.progress;
  const steer = (action: SteerAction) => async () => {
    if (!(await ask(steerQuestion(action, r), [el('p', {}, 'The reason is recorded with the rollout.')], action, true)))
      return;
    try {
      const body = { module: r.module, channel: r.channel, action, reason: reasonGiven() };
      const done = await call<{ phase: string; message: string }>('POST', '/api/rollout' + ns, body);
      say(r.module + ' on ' + r.channel + ': ' + done.phase + ' (' + done.message + ')');
    } catch (err) {
      say(messageOf(err), true);
    }
    await showFleet(open);
  };
  return el(
    'tr',
    { 'data-rollout': r.module + '/' + r.channel },
    el('td', {}, r.module),
    el('td', {}, r.channel),
    el('td', {}, rolloutVersion(p)),
    el(
      'td',
      {},
      p ? el('span', { class: 'phase', title: p.message }, p.phase) : el('span', { class: 'note' }, r.problem),
    ),
    el('td', {}, wavesText(p)),
    el(
      'td',
      {},
      p
        ? [
            el('button', { type: 'button', onclick: steer('pause') }, 'Pause'),
            el('button', { type: 'button', onclick: steer('resume') }, 'Resume'),
            el('button', { type: 'button', class: 'danger', onclick: steer('abort') }, 'Abort'),
          ]
        : '',
    ),
  );
}

/** Follows the fleet's namespace: its changes show while the tab does. */
export function listenFleet(open: OpenKyma): void {
  fleetSource?.close();
  fleetSource = new EventSource(fleetEventsUrl(fleetNamespace || namespaceOf(session.kyma), session.token));
  fleetSource.addEventListener('changed', () => {
    if (!byId('fleet').hidden) void showFleet(open).catch((err: unknown) => say(messageOf(err), true));
  });
}

/** Stops following the fleet (another tab shows). */
export function stopFleet(): void {
  fleetSource?.close();
  fleetSource = undefined;
}

/** Shows another namespace, all its states. */
export function chooseNamespace(namespace: string, open: OpenKyma): void {
  fleetNamespace = namespace;
  stateFilter = '';
  listenFleet(open);
}
