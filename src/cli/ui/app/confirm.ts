// The confirmation dialog: a title, what the user should know, the button that goes ahead, and a
// reason to give when asked for one.
import { byId } from './dom';

/** Shows the dialog; true when the user went ahead. */
export function ask(title: string, body: Node[], ok: string, withReason = false): Promise<boolean> {
  byId('reason-label').hidden = !withReason;
  byId<HTMLInputElement>('reason').value = '';
  byId('confirm-title').textContent = title;
  byId('confirm-body').replaceChildren(...body);
  byId('confirm-ok').textContent = ok;
  const d = byId<HTMLDialogElement>('confirm');
  d.showModal();
  return new Promise((resolve) => d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true }));
}

/** The reason the user gave in the last dialog. */
export function reasonGiven(): string {
  return byId<HTMLInputElement>('reason').value;
}
