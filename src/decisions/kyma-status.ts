// The Kyma's status as its parts stand: each module's entry, the aggregated state, the
// conditions and last operation, and the search attribute values written with it. Pure
// functions over a view: nothing here decides what to do, only how the Kyma looks.
import type { KymaStatusInput, ModuleStatus } from '../api/kyma';
import { stateOf, type Reason } from '../api/reasons';
import type { ConditionInput, State } from '../api/shared';
import type { KymaSnapshot } from '../contract/kyma';
import type { Resolution, ResolvedModule } from '../contract/module';
import type { ModuleReport, Readiness } from '../contract/readiness';
import type { RolloutEnded } from '../contract/rollout';
import { boundedText } from './conditions';
import type { KymaStep } from './kyma-steps';
import type { Hold } from './maintenance-window';
import { fitKeywordList } from './search-attribute-values';

/** A module's entry in .status.modules, with the reason behind it (the condition names the most severe). */
export interface Entry {
  status: ModuleStatus;
  reason: Reason;
  /** It shows that its cluster cannot be reached, which the Kyma's message tells once for all. */
  unreachable?: true;
}

/** What the status shows of the Kyma's modules (the module set's records, read only). */
export interface ModuleSetView {
  readonly desired: Readonly<Record<string, ResolvedModule>>;
  readonly failures: Readonly<Record<string, Extract<Resolution, { failure: object }>>>;
  readonly held: Readonly<Record<string, Hold>>;
  readonly reports: Readonly<Record<string, ModuleReport>>;
  readonly removing: Readonly<Record<string, 'remove' | 'release'>>;
  /** Leaving modules whose workflow has reported since it was told to go. */
  readonly leavingReported: ReadonlySet<string>;
}

/** Everything the Kyma's status is made of. */
export interface KymaStatusView {
  snapshot?: KymaSnapshot;
  /** The Kyma cannot be reconciled (`snapshot.invalid` says why). */
  invalid: boolean;
  modules: ModuleSetView;
  /** The rollout gate: module → the version it waits for, and the rollouts that ended without reaching it. */
  awaitingRollout: Readonly<Record<string, string>>;
  rolloutEnded: Readonly<Record<string, RolloutEnded>>;
  /** How the runtime side stands (none for a Kyma without one). */
  runtime?: ConditionInput;
  /** Why the runtime could not be synced, when that sways the Kyma's state. */
  runtimeProblem?: Readiness;
  /** What stayed in clusters the Kyma's Secret named before (the condition `TargetCluster`): the Kyma is Warning while it does. */
  targetCluster?: ConditionInput;
  /** What this run tells of a workflow of this Kyma's that the server ended (the condition `Workflow`). */
  endedNote?: string;
  /** Every module is gone and the finalizer goes. */
  finalizing: boolean;
}

const SEVERITY: State[] = ['Error', 'Warning', 'Deleting', 'Processing', ''];

/** Upstream's aggregation: any Error → Error; else Warning; else anything not Ready/Unmanaged → Processing; else Ready. */
export function aggregateState(states: State[]): State {
  const s = new Set(states);
  if (s.has('Error')) return 'Error';
  if (s.has('Warning')) return 'Warning';
  if ([...s].some((x) => x !== 'Ready' && x !== 'Unmanaged')) return 'Processing';
  return 'Ready';
}

/**
 * Each module's entry in .status.modules, with the reason behind it. Mandatory modules have
 * none (as upstream): their Manifests and Events tell of them, and they do not sway the state.
 */
export function moduleEntries(v: KymaStatusView): Entry[] {
  const { desired, failures, held, reports, removing, leavingReported } = v.modules;
  const spec = v.snapshot?.deleting ? [] : (v.snapshot?.modules ?? []);
  const inSpec = new Set(spec.map((m) => m.name));
  const current = spec
    .filter((m) => !m.mandatory)
    .map((m): Entry => {
      if (!m.managed)
        return {
          status: {
            name: m.name,
            state: 'Unmanaged',
            message: 'managed: false: the module keeps running without lifecycle management',
          },
          reason: 'Unmanaged',
        };
      const failure = failures[m.name];
      if (failure) {
        const { reason, message } = failure.failure;
        // As upstream: no version, for nothing of it was installed (a hidden module that ran is
        // being removed; its message says why).
        return { status: { name: m.name, channel: failure.channel, state: stateOf(reason), message }, reason };
      }
      const report = reports[m.name];
      const awaited = v.awaitingRollout[m.name];
      if (report && awaited) {
        const ended = v.rolloutEnded[m.name];
        const why =
          ended?.version === awaited
            ? `${ended.message}; it stays at ${report.status.version ?? 'its version'} until the next promotion`
            : `version ${awaited} of channel ${report.status.channel ?? ''} waits for its rollout`;
        return {
          status: { ...report.status, message: `${report.status.message ? `${report.status.message}; ` : ''}${why}` },
          reason: report.reason,
        };
      }
      const hold = held[m.name];
      if (report && hold) return heldEntry(report, hold);
      if (report) return { status: report.status, reason: report.reason };
      const d = desired[m.name];
      return {
        status: {
          name: m.name,
          state: 'Processing',
          message: d ? `installing ${d.version}` : 'installing',
          ...(d ? { channel: d.channel } : {}),
        },
        reason: 'Installing',
      };
    });
  // Modules on their way out keep an entry until they are gone.
  const leaving = Object.keys(removing)
    .filter((n) => removing[n] === 'remove' && !inSpec.has(n) && !desired[n]?.mandatory)
    .map((n): Entry => {
      const report = reports[n];
      if (report && leavingReported.has(n)) return { status: report.status, reason: report.reason };
      return {
        status: { ...(report?.status ?? { name: n }), name: n, state: 'Deleting', message: 'removing the module' },
        reason: 'Removing',
      };
    });
  return [...current, ...leaving];
}

/** The status the Kyma should have now. */
export function kymaStatus(v: KymaStatusView): KymaStatusInput {
  if (v.invalid && v.snapshot?.invalid) return invalidStatus(v.snapshot.invalid, v.snapshot.channel);
  const deleting = v.snapshot?.deleting ?? false;
  const runtime = v.runtime;
  // The cluster cannot be reached (or its runtime Kyma not synced): the Kyma says so in its
  // state at once, not only once each module has tried and failed; and so do its modules'
  // entries, which would otherwise keep what they last saw there.
  const problem = runtime?.status === 'False' ? v.runtimeProblem : undefined;
  const down = problem && !deleting && CLUSTER_DOWN.includes(problem.reason) ? problem : undefined;
  const entries = down ? moduleEntries(v).map((e) => unreachableEntry(e, down)) : moduleEntries(v);
  const modules = entries.map((e) => e.status);
  const state = deleting ? 'Deleting' : aggregateState([...modules.map((m) => m.state), ...kymaProblems(v, problem)]);
  const notReady = entries.filter((e) => e.status.state !== 'Ready' && e.status.state !== 'Unmanaged');
  notReady.sort((a, b) => SEVERITY.indexOf(a.status.state) - SEVERITY.indexOf(b.status.state));
  const message = notReady.length === 0 ? 'all modules are ready' : notReadySummary(notReady);
  return {
    state,
    activeChannel: v.snapshot?.channel,
    modules,
    conditions: kymaConditions(v, notReady, message),
    lastOperation: { operation: kymaOperation(v, { state, message, notReady, problem, deleting }) },
  };
}

/** What the Kyma says it is doing: finalizing, deleting, ready, or why it is not. */
function kymaOperation(
  v: KymaStatusView,
  s: { state: State; message: string; notReady: Entry[]; problem: Readiness | undefined; deleting: boolean },
): string {
  const operation = v.finalizing
    ? 'all modules removed; removing the finalizer'
    : s.deleting
      ? `deleting: ${s.message}`
      : s.state === 'Ready'
        ? 'kyma is ready'
        : notReadyOperation(v, s.notReady, s.message, s.problem);
  return v.runtime?.status === 'False' && s.deleting ? `${operation}; ${v.runtime.message}` : operation;
}

/** The status of a Kyma whose spec is refused: the problem, and no modules. */
function invalidStatus(invalid: Readiness, channel: string | undefined): KymaStatusInput {
  const { reason, message } = invalid;
  return {
    state: stateOf(reason),
    activeChannel: channel,
    modules: [],
    conditions: [{ type: 'Modules', status: 'False', reason, message }],
    lastOperation: { operation: message },
  };
}

/**
 * The last operation of a Kyma neither Ready nor deleted: the runtime's problem (which tells the
 * outage once: the modules it holds back are not named again), else what stayed in a cluster
 * its Secret named before, else the modules not ready (`message`).
 */
function notReadyOperation(
  v: KymaStatusView,
  notReady: Entry[],
  message: string,
  problem: Readiness | undefined,
): string {
  const runtime = v.runtime;
  if (problem && runtime) {
    const others = notReady.filter((e) => !e.unreachable);
    return others.length === 0 ? runtime.message : `${runtime.message}; ${notReadySummary(others)}`;
  }
  const left = v.targetCluster;
  return left && notReady.length === 0 ? left.message : message;
}

/** The Kyma's conditions: its modules', its runtime's, its target cluster's, and a note that its workflow restarted. */
function kymaConditions(v: KymaStatusView, notReady: Entry[], message: string): KymaStatusInput['conditions'] {
  return [
    {
      type: 'Modules',
      status: notReady.length === 0 ? 'True' : 'False',
      reason: notReady[0]?.reason ?? 'Ready',
      message,
    },
    ...(v.runtime ? [v.runtime] : []),
    ...(v.targetCluster ? [v.targetCluster] : []),
    ...(v.endedNote ? [{ type: 'Workflow', status: 'True' as const, reason: 'Restarted', message: v.endedNote }] : []),
  ];
}

/** The states of what besides its modules sways the Kyma's: its runtime's problem, what stayed in a cluster its Secret named before. */
function kymaProblems(v: KymaStatusView, problem: Readiness | undefined): State[] {
  return [
    ...(problem ? [stateOf(problem.reason)] : []),
    ...(v.targetCluster ? [stateOf('ModulesLeftOnOldCluster')] : []),
  ];
}

/**
 * The step that writes `status`, with the search attribute values it brings, each cut to
 * Temporal's limit; `mirror`: to the runtime Kyma too.
 */
export function writeStatusStep(status: KymaStatusInput, channel: string | undefined, mirror = false): KymaStep {
  const listed = status.modules ?? [];
  const modules = fitKeywordList(listed.map((m) => m.name));
  const inError = fitKeywordList(listed.filter((m) => m.state === 'Error').map((m) => m.name));
  const versions = fitKeywordList(listed.filter((m) => m.version).map((m) => `${m.name}@${m.version}`));
  return {
    kind: 'writeStatus',
    status,
    searchAttributes: {
      state: status.state ?? '',
      channel: channel ?? '',
      modules: modules.values,
      omitted: modules.omitted,
      inError: inError.values,
      versions: versions.values,
    },
    ...(mirror ? { mirror } : {}),
  };
}

/** How many modules that are not Ready the Kyma's message names (all are in `.status.modules`). */
const NAMED_NOT_READY = 10;

/** The modules that are not Ready, most severe first, for the Kyma's condition and last operation: a few, then how many more. */
function notReadySummary(notReady: Entry[]): string {
  const named = notReady
    .slice(0, NAMED_NOT_READY)
    .map((e) => `${e.status.name}: ${boundedText(e.status.message ?? e.status.state, 1024)}`);
  const more = notReady.length - named.length;
  return `${named.join('; ')}${more > 0 ? `; and ${more} more not ready (see .status.modules)` : ''}`;
}

/** Why a runtime could not be synced that means its cluster cannot be reached or used at all. */
const CLUSTER_DOWN: Reason[] = ['TargetClusterUnreachable', 'TargetCredentialsRefused', 'InvalidKubeconfig'];

/**
 * A module's entry while its cluster cannot be reached: what it last saw there is not known to
 * hold any more, so it shows the outage (Error, as upstream's Manifest shows a cluster it cannot
 * reach), then what it reported last. Unmanaged modules and those in Error already stay as they are.
 */
function unreachableEntry(e: Entry, down: Readiness): Entry {
  if (e.status.state === 'Unmanaged' || e.status.state === 'Error') return e;
  const last = `${e.status.state}${e.status.message ? `, ${e.status.message}` : ''}`;
  return {
    status: { ...e.status, state: stateOf(down.reason), message: `${down.message} (last reported: ${last})` },
    reason: down.reason,
    unreachable: true,
  };
}

/** A running module kept at its version: upstream's `maintenance: true`, or the policy's failure. */
function heldEntry(report: ModuleReport, hold: Hold): Entry {
  if (hold.reason)
    return { status: { ...report.status, state: stateOf(hold.reason), message: hold.message }, reason: hold.reason };
  return { status: { ...report.status, maintenance: true, message: hold.message }, reason: report.reason };
}
