// An API call: with the page's token and Kyma; an answer that is not OK throws its error.
import { session } from './session';
import { callUrl } from './urls';

export async function call<T>(method: 'GET' | 'POST', path: string, body?: object): Promise<T> {
  const res = await fetch(callUrl(path, session.kyma), {
    method,
    headers: { 'X-KLM-Token': session.token, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const data = (await res.json()) as T & { error?: string };
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}
