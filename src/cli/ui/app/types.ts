// What the page reads of the server's answers (src/cli/ui/api.ts, fleet.ts and server.ts). The
// page is bundled alone, without server code, so it says here what it expects;
// test/unit/ui-app-types.test.ts checks that the server's answers fit.

export interface ModuleRow {
  name: string;
  version?: string;
  desiredVersion?: string;
  customResourcePolicy: string;
  managed: boolean;
  moduleStatus: string;
  installationStatus: string;
  message?: string;
  direct?: { community: boolean };
}

export interface Modules {
  rows: ModuleRow[];
  /** Whether the Kyma exists (without one, only direct installs are listed). */
  kyma: boolean;
}

export interface Why {
  state?: string;
  message?: string;
  installedVersion?: string;
  desiredVersion?: string;
  channel?: string;
  /** The module's workflow: none for a direct install, which klm made and no workflow follows. */
  workflowId?: string;
  temporalUi?: string;
  direct?: { template: string };
  events: { reason: string; message: string; lastTimestamp?: string }[];
}

/** A resource people made of a module's kinds: it blocks the module's deletion. */
export interface Blocker {
  kind: string;
  namespace?: string;
  name: string;
}

export interface CatalogEntry {
  name: string;
  versions: string[];
  /** channel → version */
  channels: Record<string, string>;
  channelProblems?: Record<string, { reason: string; message: string }>;
  beta: boolean;
  internal: boolean;
  /** `kyma` (offered by the lifecycle manager), else where a community module comes from. */
  origin: string;
  documentation?: string;
  icon?: string;
}

export interface Catalog {
  kyma: boolean;
  entries: CatalogEntry[];
}

export interface FleetKyma {
  name: string;
  state: string;
  channel: string;
  modules: number;
  errors: number;
}

/** The fleet view's answer (src/cli/ui/fleet.ts answers with this very type). */
export interface Fleet {
  namespace: string;
  /** Kymas per state. */
  counts: Record<string, number>;
  kymas: FleetKyma[];
  /** Modules in Error, across the namespace's Kymas. */
  errors: { kyma: string; module: string; message: string }[];
}

export interface RolloutProgress {
  version: string;
  from?: string;
  phase: string;
  message: string;
  waves: { done: number; size: number }[];
}

export interface ChannelRollout {
  module: string;
  channel: string;
  progress?: RolloutProgress;
  problem?: string;
}

export type SteerAction = 'pause' | 'resume' | 'abort';

/** What a change answers: the lines the command line would print. */
export interface Said {
  said: string[];
}
