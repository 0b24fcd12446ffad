// What the Temporal UI shows of a Kyma's workflow (its current details, markdown): the state,
// the message behind it, and per module its version. Pure.
import type { KymaStatusInput } from '../api/kyma';

/** `|` would end a table cell, and a newline the row. */
function cell(text: string | undefined): string {
  return (text ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** `omitted`: modules the `Modules` search attribute leaves out (Temporal's limit on a value). */
export function kymaDetails(status: KymaStatusInput, omitted = 0): string {
  const listed = omitted
    ? `\n\nThe search attribute Modules lists the first ${(status.modules?.length ?? 0) - omitted} ` +
      `of ${status.modules?.length ?? 0} modules (Temporal's limit on one value); the table below ` +
      `has them all.`
    : '';
  const channel = status.activeChannel ? ` on channel **${status.activeChannel}**` : '';
  const head = `**${status.state ?? 'Processing'}**${channel}\n\n${status.lastOperation?.operation ?? ''}${listed}`;
  const modules = status.modules ?? [];
  if (modules.length === 0) return head;
  const rows = modules.map(
    (m) => `| ${cell(m.name)} | ${cell(m.version)} | ${cell(m.channel)} | ${m.state} | ${cell(m.message)} |`,
  );
  return [
    head,
    '',
    '| module | version | channel | state | message |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
  ].join('\n');
}
