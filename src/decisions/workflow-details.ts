// What the Temporal UI shows of a Kyma or module workflow (its current details, markdown): the
// state, the message behind it, and per module its version. Pure.
import type { KymaStatusInput } from '../api/kyma';
import type { ModuleReport } from '../contract/readiness';

/** `|` would end a table cell, and a newline the row. */
function cell(text: string | undefined): string {
  return (text ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function kymaDetails(status: KymaStatusInput): string {
  const head = `**${status.state ?? 'Processing'}**${status.activeChannel ? ` on channel **${status.activeChannel}**` : ''}\n\n${status.lastOperation?.operation ?? ''}`;
  const modules = status.modules ?? [];
  if (modules.length === 0) return head;
  const rows = modules.map((m) => `| ${cell(m.name)} | ${cell(m.version)} | ${cell(m.channel)} | ${m.state} | ${cell(m.message)} |`);
  return [head, '', '| module | version | channel | state | message |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

export function moduleDetails(report: ModuleReport): string {
  const s = report.status;
  const at = [s.version ? `version ${s.version}` : undefined, s.channel ? `channel ${s.channel}` : undefined].filter(Boolean).join(', ');
  return `**${s.name}**${at ? ` (${at})` : ''}: **${s.state}** (${report.reason})\n\n${s.message ?? ''}`;
}
