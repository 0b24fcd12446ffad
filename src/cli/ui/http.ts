// The web view's HTTP plumbing: errors with a status, answers with the headers every answer
// carries, a request's JSON body, a required string of it.
import type http from 'node:http';
import { Refused, UsageError } from '../output';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    'Content-Type': type,
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': "default-src 'self'; img-src 'self' https: data:; frame-ancestors 'none'",
  });
  res.end(body);
}

export async function bodyOf(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += (chunk as Buffer).toString();
    if (text.length > 65_536) throw new HttpError(413, 'request too large');
  }
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    throw new HttpError(400, 'the request is not JSON');
  }
}

export function text(v: unknown, what: string): string {
  if (typeof v !== 'string' || !v) throw new HttpError(400, `${what} is missing`);
  return v;
}

/** The status of a failed request: its HttpError's, 409 for a refusal, 400 for a usage error, else 500. */
export function statusOf(err: unknown): number {
  return err instanceof HttpError ? err.status : err instanceof Refused ? 409 : err instanceof UsageError ? 400 : 500;
}
