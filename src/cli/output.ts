// How klm prints what it found: a table for people, JSON or YAML for scripts (-o).
import { stringify } from 'yaml';

export type Output = 'table' | 'json' | 'yaml';

export function outputOf(value: string): Output {
  if (value === 'table' || value === 'json' || value === 'yaml') return value;
  throw new UsageError(`unknown output "${value}": use table, json or yaml`);
}

/** Columns padded to their widest cell, headers in capitals as kubectl prints them. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]! + 3)))
      .join('')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `data` as JSON or YAML, or as `asTable` renders it. */
export function render<T>(output: Output, data: T, asTable: (d: T) => string): string {
  if (output === 'json') return JSON.stringify(data, null, 2);
  if (output === 'yaml') return stringify(data).trimEnd();
  return asTable(data);
}

/**
 * Exit codes (docs/user/klm.md): 0 done, 1 refused or failed (the message says why and what to
 * do), or the command line itself is wrong (1 too, as the Kyma CLI exits: cobra's usage errors
 * end its main with 1, so scripts written for it read klm the same), 3 a --wait ran out of time,
 * 4 the Kyma's workflow does not run (`klm kyma status`, which still prints what it found).
 */
export const EXIT = { ok: 0, failed: 1, usage: 1, timeout: 3, notRunning: 4 } as const;

/** Refused or failed, with a message that says why and what to do: exit 1. */
export class Refused extends Error {}

/** The command line is wrong: exit 1, as the Kyma CLI's usage errors (the message says what is wrong). */
export class UsageError extends Error {}

/** A --wait ran out of time: exit 3. */
export class WaitTimeoutError extends Error {}

/** The Kyma's workflow does not run: exit 4. */
export class NotRunningError extends Error {}

let debugging = false;

/** `--debug` (the Kyma CLI's hidden flag): what could not be read and the causes of errors go to stderr. */
export function setDebug(on: boolean): void {
  debugging = on;
}

export function debugOn(): boolean {
  return debugging;
}

/** A line for `--debug` only, on stderr (never on stdout, which scripts parse: -o json stays JSON). */
export function debugLine(line: string): void {
  if (debugging) console.error(`klm: debug: ${line}`);
}

/**
 * What `--debug` adds to an error: its stack and the chain of its causes. Messages are klm's own
 * or the API server's, which name objects and never carry credentials (klm prints none it reads).
 */
export function debugDetails(err: unknown): string[] {
  const lines: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (e instanceof Error) {
      lines.push(
        ...(e.stack ?? `${e.name}: ${e.message}`).split('\n').map((l, i) => (depth && !i ? `caused by: ${l}` : l)),
      );
      e = e.cause;
    } else {
      lines.push(`${depth ? 'caused by: ' : ''}${typeof e === 'string' ? e : `(a ${typeof e})`}`);
      break;
    }
  }
  return lines;
}
