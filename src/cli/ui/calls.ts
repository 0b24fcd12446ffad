// The calls the web view's page makes (`/api/...`), each answered with what the command line
// would print: the fleet's (a namespace's Kymas and rollouts, steering) and a Kyma's (catalog,
// modules, why, blockers, add, delete), and their live updates.
import type http from 'node:http';
import type { KymaRef } from '../../contract/kyma';
import { kymaRefOf } from '../cluster';
import { Refused } from '../output';
import { addFrom, blockersOf, catalogOf, deleteFrom, modulesOf, whyOf, type UiContext } from './api';
import { fleetOf, rolloutsOf, steer } from './fleet';
import { bodyOf, HttpError, send, text } from './http';
import { fleetWatch, watchFor, type LiveStreams } from './live';

interface Call {
  c: UiContext;
  req: http.IncomingMessage;
  res: http.ServerResponse;
  url: URL;
  route: string;
  live: LiveStreams;
  json: (data: unknown) => void;
}

/** `POST /api/rollout`: pause, resume or abort a rollout, with a reason. */
async function steerCall({ c, req, json }: Call, namespace: string): Promise<void> {
  const b = await bodyOf(req);
  const action = b.action === 'pause' || b.action === 'resume' || b.action === 'abort' ? b.action : undefined;
  if (!action) throw new HttpError(400, 'action must be pause, resume or abort');
  const reason = typeof b.reason === 'string' ? b.reason.trim() : '';
  if (!reason) throw new HttpError(400, `${action} needs a reason (recorded with the rollout)`);
  return json(
    await steer(namespace, text(b.module, 'module'), text(b.channel, 'channel'), action, reason, c.config).catch(
      (err: unknown) => {
        throw new Refused((err as Error).message);
      },
    ),
  );
}

async function fleetCall(call: Call): Promise<void> {
  const { c, req, res, url, route, live, json } = call;
  const namespace = text(url.searchParams.get('namespace'), 'namespace');
  switch (route) {
    case 'GET /api/fleet':
      return json(await fleetOf(c.kube, namespace));
    case 'GET /api/fleet-events':
      return await live.stream(req, res, (changed) => fleetWatch(c, namespace, changed), 1000);
    case 'GET /api/rollouts':
      return json(await rolloutsOf(c.kube, namespace, c.config));
    case 'POST /api/rollout':
      return await steerCall(call, namespace);
    default:
      throw new HttpError(404, `no such call: ${route}`);
  }
}

async function kymaCall({ c, req, res, url, route, live, json }: Call): Promise<void> {
  let ref: KymaRef;
  try {
    ref = kymaRefOf(url.searchParams.get('kyma') ?? '', 'kyma');
  } catch (err) {
    throw new HttpError(400, (err as Error).message);
  }
  switch (route) {
    case 'GET /api/catalog':
      return json(await catalogOf(c, ref));
    case 'GET /api/modules':
      return json(await modulesOf(c, ref));
    case 'GET /api/why':
      return json(await whyOf(c, ref, text(url.searchParams.get('module'), 'module')));
    case 'GET /api/blockers':
      return json(await blockersOf(c, ref, text(url.searchParams.get('module'), 'module')));
    case 'GET /api/events':
      return await live.stream(req, res, (changed) => watchFor(c, ref, changed), 250);
    case 'POST /api/add': {
      const b = await bodyOf(req);
      return json({
        said: await addFrom(c, ref, {
          module: text(b.module, 'module'),
          ...(typeof b.channel === 'string' && b.channel ? { channel: b.channel } : {}),
          ...(b.direct === true ? { direct: true } : {}),
        }),
      });
    }
    case 'POST /api/delete': {
      const b = await bodyOf(req);
      return json({ said: await deleteFrom(c, ref, text(b.module, 'module'), b.deleteResources === true) });
    }
    default:
      throw new HttpError(404, `no such call: ${route}`);
  }
}

/** Answers an authorized call of the page. */
export async function answer(
  c: UiContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  live: LiveStreams,
): Promise<void> {
  const json = (data: unknown) => send(res, 200, 'application/json', JSON.stringify(data));
  const route = `${req.method} ${url.pathname}`;
  const call = { c, req, res, url, route, live, json };
  if (route.includes('/api/fleet') || route.includes('/api/rollout')) return await fleetCall(call);
  return await kymaCall(call);
}
