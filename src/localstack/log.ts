// Progress lines for long local-stack steps, on stderr so that command output stays clean.
export function log(scope: string, message: string): void {
  if (process.env.KLM_QUIET === '1') return;
  process.stderr.write(`[${scope}] ${message}\n`);
}
