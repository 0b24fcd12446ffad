// Restarts under a fleet, then replay: a worker SIGKILLed again and again while Kymas install,
// retry failures, are edited and deleted, a Kyma of many modules runs and a rollout moves in
// waves; once the fleet has settled, every run of every workflow it left replays with this code.
// `npm run bench:restart` runs the long variant (KLM_RESTART_REPLAY=long: more Kymas, a Kyma of
// 300 modules, ten kills).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKlm, type Klm } from '../support/klm';
import { restartFleet, type RestartFleetOptions } from '../support/restart-fleet';

const LONG = process.env.KLM_RESTART_REPLAY === 'long';
const SCALE: Omit<RestartFleetOptions, 'log'> = LONG
  ? { plain: 20, bigModules: 300, rolloutKymas: 20, kills: 10, killGapMs: [3_000, 15_000], settleMs: 900_000 }
  : { plain: 6, bigModules: 60, rolloutKymas: 4, kills: 5, killGapMs: [3_000, 9_000], settleMs: 180_000 };

describe('a fleet whose worker is killed again and again', () => {
  let klm: Klm;
  beforeAll(async () => {
    klm = await startKlm({
      worker: false,
      // Failures retry every few seconds, and runs continue as new often.
      settings: { installRetryMs: 2_000, maxHistoryEvents: 600 },
      rolloutPolicy: { default: 'waves: ["1", "50%"]\nsoak: 3s\nmaxConcurrent: 100\nfailureBudget: "100%"' },
    });
  });
  afterAll(async () => {
    await klm?.stop();
  });

  it(
    'settles, and every history it left replays with the current code',
    async () => {
      const report = await restartFleet(klm, { ...SCALE, log: (line) => console.log(`[restart-replay] ${line}`) });
      expect(report.crashes).toEqual([]);
      expect(report.unsettled).toEqual([]);
      expect(report.runs.kymaWorkflow).toBeGreaterThan(SCALE.plain + SCALE.rolloutKymas);
      expect(report.runs.rolloutWorkflow).toBeGreaterThan(0);
      expect(report.failures).toEqual([]);
    },
    LONG ? 3_600_000 : 600_000,
  );
});
