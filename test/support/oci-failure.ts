// The OciError a registry call fails with: the test fails if the call succeeds or fails otherwise.
import { expect } from 'vitest';
import { OciError } from '../../src/oci/registry-client';

export async function ociFailure(p: Promise<unknown>): Promise<OciError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OciError);
  return err as OciError;
}
