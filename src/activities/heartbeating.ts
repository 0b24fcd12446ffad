// An activity that waits on work it does not step through itself (another activity's apply, a
// registry's answer) heartbeats meanwhile, so that the server tells a lost worker from a slow
// step within the activity's heartbeat timeout.
import { heartbeat } from '@temporalio/activity';

/** Awaits `work`, heartbeating every 5 s meanwhile. */
export async function heartbeating<T>(work: Promise<T>): Promise<T> {
  const beat = setInterval(() => heartbeat(), 5_000);
  try {
    return await work;
  } finally {
    clearInterval(beat);
  }
}
