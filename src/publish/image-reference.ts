// Container image references as modulectl 3.2.0 reads them (internal/service/image, on
// distribution/reference's grammar): `[domain/]path[:tag][@digest]`, the path lower case. A
// reference is checked only when it looks like one (3 to 256 characters, no blank, a ':' or '@'),
// and must then have a tag or a digest, the tag not `latest` or `main`.

export interface ImageInfo {
  /** The last path segment, e.g. `template-operator`. */
  name: string;
  tag?: string;
  /** The digest's hex, without `sha256:`. */
  digest?: string;
  /** The reference as written. */
  reference: string;
}

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const DOMAIN_PART = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_PART}(?:\\.${DOMAIN_PART})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?$`,
);

/** Whether a value is checked as an image reference (upstream's IsImageReferenceCandidate). */
export function isImageCandidate(value: string): boolean {
  return value.length >= 3 && value.length <= 256 && /[:@]/.test(value) && !/[ \t\n\r]/.test(value);
}

/** The parts of a reference, or what is wrong with it (a tag or digest required; not `latest` or `main`). */
export function parseImage(reference: string): ImageInfo | { problem: string } {
  if (/^[a-f0-9]{64}$/.test(reference)) return { problem: 'names no image, only a digest' };
  const m = REFERENCE.exec(reference);
  // Path segments are lower case by the pattern; only a registry host may have capitals.
  if (!m || m[1]!.length > 255) return { problem: 'is not an image reference' };
  const [, name, tag, digest] = m;
  if (digest && digest.startsWith('sha256:') && digest.length !== 'sha256:'.length + 64)
    return { problem: 'has a sha256 digest that is not 64 hex digits' };
  if (!tag && !digest) return { problem: 'has no tag or digest' };
  if (tag && ['latest', 'main'].includes(tag.toLowerCase()))
    return { problem: `has the tag ${tag}, which is not allowed` };
  return {
    name: name!.slice(name!.lastIndexOf('/') + 1),
    ...(tag ? { tag } : {}),
    ...(digest ? { digest: digest.replace(/^sha256:/, '') } : {}),
    reference,
  };
}
