// How a request to an API server fails, typed: the server's refusal (KubeApiError), no answer
// (ClusterUnreachableError), or credentials that could not be had (CredentialError,
// TlsMaterialError). Their messages quote no credential, nor what a plugin handed out.
import { certificateTimeProblem, describeTlsProblem, type TlsProblem } from './kubeconfig';

/** What a Status names of the object an error is about (for 403: `kind` is the resource, e.g. `deployments`). */
export interface StatusDetails {
  group?: string;
  kind?: string;
  name?: string;
}

export class KubeApiError extends Error {
  /**
   * `discovery`: the request was the API discovery of a group version, which every
   * authenticated user may read: a 403 there means the server lets the identity do nothing.
   */
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    readonly details: StatusDetails = {},
    readonly discovery = false,
    /** For a 401: why the client certificate presented was not valid then ("expired at …"), if that was it. */
    readonly clientCertificate?: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

/** The API server could not be reached, did not answer in time, or failed TLS. */
export class ClusterUnreachableError extends Error {
  /** The request went out on a kept-alive connection the server had closed: safe to send again. */
  staleConnection = false;

  constructor(
    readonly server: string,
    readonly detail: string,
  ) {
    super(`${server} ${detail}`);
    this.name = 'ClusterUnreachableError';
  }
}

/** The kubeconfig's credential plugin or auth provider could not give a credential. */
export class CredentialError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CredentialError';
  }
}

/** The kubeconfig's TLS material (CA, client certificate or key) cannot be used: which field, why, and what to do. */
export class TlsMaterialError extends CredentialError {
  constructor(
    server: string,
    readonly problem: TlsProblem,
  ) {
    super(`the kubeconfig for ${server} could not be used: its ${describeTlsProblem(problem)}`);
    this.name = 'TlsMaterialError';
  }
}

/**
 * The API server's refusal; a 401 of a client certificate no longer (or not yet) valid says so,
 * and when (`cert`: the client certificate the request presented, if any).
 */
export function refusal(
  status: number,
  reason: string,
  message: string,
  cert: Buffer | string | undefined,
  details: StatusDetails = {},
): KubeApiError {
  const problem = status === 401 ? certificateTimeProblem(cert) : undefined;
  return new KubeApiError(
    status,
    reason,
    problem ? `${message} (the client certificate ${problem})` : message,
    details,
    false,
    problem,
  );
}

export function isNotFound(err: unknown): boolean {
  return err instanceof KubeApiError && err.status === 404;
}

/** What a socket-level failure means, in words that quote nothing but the error's code. */
export function describeNetworkError(err: unknown): string {
  const code = (err as { code?: string }).code ?? '';
  if (code === 'ECONNREFUSED') return 'refused the connection';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'closed the connection';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'has a host name that does not resolve';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'is not reachable on the network';
  if (code === 'ETIMEDOUT' || code === 'KLM_TIMEOUT') return 'did not answer in time';
  if (/CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS|EPROTO|ALTNAME/i.test(code))
    return `failed TLS verification (${code})`;
  return `could not be reached${code ? ` (${code})` : ''}`;
}
