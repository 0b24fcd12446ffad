// The page's few DOM helpers: find an element, make one, say something on the status line.

/** The element of the page with this id (index.html has each the scripts look for). */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the page has no #${id}`);
  return found as T;
}

export type Attrs = Record<string, string | number | boolean | undefined | ((ev: Event) => unknown)>;
export type Child = Node | string | number | null | undefined;

/**
 * An element with attributes (`on…`: a listener; true: present, false or undefined: absent) and
 * children (text for what is not a node; null and undefined are left out).
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (typeof v === 'function') e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== false) e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null) e.append(c instanceof Node ? c : String(c));
  return e;
}

/** A table's only row when it has none: a note across its columns. */
export function noRows(columns: number, note: string): HTMLTableRowElement[] {
  return [el('tr', {}, el('td', { colspan: columns, class: 'note' }, note))];
}

/** The status line: what the last action said, or what went wrong. */
export function say(text: string, error = false): void {
  const status = byId('status');
  status.textContent = text;
  status.className = error ? 'error' : '';
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
