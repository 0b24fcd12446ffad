// Which Kyma and module names this product can work with. A Kyma's name becomes a label value
// (on its kubeconfig Secret, its Manifests and every object it applies) and a module's name a
// label value and the tail of its Manifest's name `<kyma>-<module>`: label values hold at most
// 63 characters, and a Manifest name must be a DNS subdomain.
import type { Readiness } from '../contract/readiness';

const MAX_LABEL_VALUE = 63;
const MODULE_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

export function kymaNameProblem(name: string): Readiness | undefined {
  if (name.length <= MAX_LABEL_VALUE) return undefined;
  return {
    reason: 'InvalidKymaName',
    message:
      `the Kyma name is ${name.length} characters long; it labels the Kyma's kubeconfig Secret, ` +
      `Manifests and module objects, and a label value holds at most ${MAX_LABEL_VALUE}: ` +
      `re-create the Kyma under a name of at most ${MAX_LABEL_VALUE} characters`,
  };
}

export function moduleNameProblem(name: string): Readiness | undefined {
  if (name.length <= MAX_LABEL_VALUE && MODULE_NAME.test(name)) return undefined;
  return {
    reason: 'InvalidModuleName',
    message:
      `module name "${name}" cannot be used: it must be at most ${MAX_LABEL_VALUE} characters of ` +
      `lower-case letters, digits, '-' and '.', starting and ending with a letter or digit`,
  };
}
