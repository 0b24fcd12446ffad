// What a module reports: its status entry in the Kyma (and its Manifest's status), built from a
// readiness, and the publication of it whenever it changes (a `publish` step, not again while it
// is what was published last).
import { manifestName } from '../api/names';
import { stateOf } from '../api/reasons';
import { API_VERSION } from '../api/shared';
import type { DefaultCrRef } from '../contract/artifacts';
import type { KymaRef } from '../contract/kyma';
import type { Installed, ResolvedModule } from '../contract/module';
import type { ModuleReport, Readiness } from '../contract/readiness';
import type { ModuleStep } from './module-steps';
import { moduleNameNote } from './resolution';

/** What a report is made of besides the readiness. */
export interface ReportBasis {
  kyma: KymaRef;
  desired: ResolvedModule;
  /** What an install put there (none: the report has no version). */
  installed?: Installed;
  /** The default CR the module manages. */
  managedCr?: DefaultCrRef;
}

export function moduleReport(r: Readiness, b: ReportBasis): ModuleReport {
  const d = b.desired;
  const cr = b.managedCr;
  return {
    reason: r.reason,
    status: {
      name: d.name,
      ...(d.channel ? { channel: d.channel } : {}),
      // Only what an install put there: a module whose install never succeeded has no version.
      ...(b.installed ? { version: b.installed.version } : {}),
      state: stateOf(r.reason),
      message: withNote(r.message, moduleNameNote(d)),
      // Both, as upstream: fqdn for backwards compatibility, ocmComponentName its successor.
      ...(d.fqdn ? { fqdn: d.fqdn, ocmComponentName: d.fqdn } : {}),
      template: {
        apiVersion: API_VERSION,
        kind: 'ModuleTemplate',
        metadata: { name: d.template.name, namespace: d.template.namespace, generation: d.template.generation },
      },
      manifest: {
        apiVersion: API_VERSION,
        kind: 'Manifest',
        metadata: { name: manifestName(b.kyma.name, d.name), namespace: b.kyma.namespace },
      },
      ...(cr
        ? {
            resource: {
              apiVersion: cr.apiVersion,
              kind: cr.kind,
              metadata: { name: cr.name, namespace: cr.namespace ?? '' },
            },
          }
        : {}),
    },
  };
}

/** A module Ready but for the system namespaces its manifest ships, which were left alone, shows a Warning that names them. */
export function leftAloneWarning(r: Readiness, installed: Installed | undefined): Readiness {
  const left = installed?.leftAlone;
  if (r.reason !== 'Ready' || !left?.length) return r;
  return {
    reason: 'SystemNamespaceSkipped',
    message:
      `the manifest ships ${left.join(', ')}: system namespaces are left as they are (never labelled or deleted ` +
      `by the lifecycle manager); the rest of the module is installed and ready`,
  };
}

/** A status message with a note after it, if there is one. */
function withNote(message: string, note: string | undefined): string {
  return note ? `${message} (note: ${note})` : message;
}

/** The reports a module published: the last one, and the readiness it said (carried across continue-as-new). */
export class ModuleReporter {
  /** What the report published last said (carried: the next run rebuilds the report from it). */
  readiness?: Readiness;
  private published?: ModuleReport;
  private last = '';

  /** `carried`: the readiness the run before published last, rebuilt: not published again unless it changes. */
  constructor(carried?: { uid: string; readiness: Readiness; basis: ReportBasis }) {
    if (!carried) return;
    this.readiness = carried.readiness;
    this.published = moduleReport(carried.readiness, carried.basis);
    this.last = JSON.stringify([carried.uid, this.published]);
  }

  /** The report's publication, unless it is what was published last (of the Kyma of this uid). */
  publish(uid: string, r: Readiness, b: ReportBasis): ModuleStep | undefined {
    const report = moduleReport(r, b);
    const key = JSON.stringify([uid, report]);
    if (key === this.last) return undefined;
    this.last = key;
    this.published = report;
    this.readiness = r;
    const cr = b.installed?.fetched.defaultCr;
    return {
      kind: 'publish',
      report,
      readiness: r,
      module: b.desired,
      ...(b.installed ? { rendered: b.installed.rendered } : {}),
      ...(b.managedCr ? { resource: b.managedCr } : {}),
      ...(cr ? { resourceKind: `${cr.apiVersion}/${cr.kind}` } : {}),
    };
  }

  /** The report published last in this run (none yet: undefined), for the `status` query. */
  current(): ModuleReport | undefined {
    return this.published;
  }
}
