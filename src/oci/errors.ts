// What the OCI clients can go wrong with, typed so that activities map it to a Reason.
import { createHash } from 'node:crypto';

export type OciErrorReason =
  | 'DigestMismatch'
  | 'BlobNotFound'
  | 'RegistryUnavailable'
  | 'RegistryError'
  | 'InvalidDigest'
  | 'RegistryCredentialsRefused';

export class OciError extends Error {
  /**
   * @param retryAfterMs how long the registry asked us to wait (`Retry-After` on 429 and 5xx).
   */
  constructor(
    readonly reason: OciErrorReason,
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'OciError';
  }
}

export function sha256Digest(data: Uint8Array): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}
