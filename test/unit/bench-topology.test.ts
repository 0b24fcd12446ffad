// The bench's topology (production's by default: a cluster per Kyma, simulated runtimes beyond
// the machine's clusters) and where it counts an install's events and requests, by concern.
import { describe, expect, it } from 'vitest';
import { concernOfEvent, concernOfRequest } from '../../bench/concerns';
import { issue38Rows } from '../../bench/targets';
import { MAX_LOCAL_CLUSTERS, topology } from '../../bench/topology';

describe('the bench topology', () => {
  it('gives each Kyma a cluster of its own by default, up to the machine; beyond, a runtime of its own on them', () => {
    expect(topology({ kind: undefined, kymas: 20, smoke: false })).toEqual({
      clusterCount: 20,
      distinctCredentials: false,
    });
    expect(topology({ kind: undefined, kymas: 100, smoke: false })).toEqual({
      clusterCount: MAX_LOCAL_CLUSTERS,
      distinctCredentials: true,
    });
    expect(topology({ kind: 'shared', kymas: 100, smoke: false })).toEqual({
      clusterCount: 2,
      distinctCredentials: false,
    });
    expect(() => topology({ kind: 'cloud', kymas: 1, smoke: false })).toThrow(/production or shared/);
  });
});

describe('cost by concern', () => {
  it('counts history events and API requests for the per-runtime work they belong to', () => {
    expect(concernOfEvent('activity installModules')).toBe('install');
    expect(concernOfEvent('activity syncRuntimeCatalog')).toBe('catalog sync');
    expect(concernOfEvent('local activity writeKymaChanges')).toBe('status writes');
    expect(concernOfEvent('signal kymaChanged')).toBe('watches and signals');
    expect(concernOfEvent('workflow task')).toBe('workflow tasks and run bookkeeping');
    expect(concernOfRequest('cluster-3 APPLY moduletemplates ')).toBe('catalog sync');
    expect(concernOfRequest('cluster-3 GET kymas ')).toBe('runtime Kyma');
    expect(concernOfRequest('kcp PATCH kymas status')).toBe('status writes');
    expect(concernOfRequest('cluster-3 WATCH deployments ')).toBe('watches and signals');
    expect(concernOfRequest('cluster-3 APPLY deployments ')).toBe('install');
  });
});

describe("issue 38's targets", () => {
  const ours = {
    installCpuMsPerModule: 100,
    klmPeakRssMB: 300,
    allReadySeconds: 20,
    idleCpuSecondsPerMinute: 0.2,
    promotion: { inClusterLastSeconds: 5, cpuSeconds: 2 },
    requests: { engine: { total: 30 } },
    historyEventsPerModuleInstall: 20,
  };
  it('holds each figure to its multiple of upstream, and says so when upstream was not measured', () => {
    const upstream = {
      version: '1.20.4',
      source: 'this run',
      kymas: 20,
      allReadySeconds: 60,
      installCpuMsPerModule: 80,
      peakRssMB: 160,
      promotion: { lastSeconds: 6, inClusterLastSeconds: 5, cpuSeconds: 1 },
      idleCpuSecondsPerMinute: 0.1,
      requestsPerInstall: 80,
    };
    const rows = new Map(issue38Rows({ ...ours, upstream }).map((r) => [r.figure.replace(/ \(.*/, ''), r]));
    expect(rows.get('CPU of worker + bridge + Temporal per module install')).toMatchObject({ ratio: 1.25, met: false });
    expect(rows.get('peak RSS of worker + bridge')).toMatchObject({ met: false });
    expect(rows.get('all Ready')).toMatchObject({ met: true });
    expect(rows.get('API requests per module install')).toMatchObject({ ratio: 0.375, met: true });
    expect(rows.get('history events per module install')).toMatchObject({ met: false });
    for (const row of issue38Rows(ours).filter((r) => r.target.includes('upstream')))
      expect([row.upstream, row.met], row.figure).toEqual(['not measured', undefined]);
  });
});
