// What the commands tell and ask the person at the terminal besides their output: progress on
// stderr, and yes/no questions.
import { createInterface } from 'node:readline/promises';

/** Progress of long waits goes to stderr, so that stdout stays what -o asked for. */
export const progress = (line: string) => console.error(`klm: ${line}`);

/** Asks a yes/no question on the terminal; no terminal (a script): no. */
export async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}
