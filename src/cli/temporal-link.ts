// A workflow's page in the Temporal web UI, for the commands that name a workflow.
export function workflowLink(
  ui: string | undefined,
  namespace: string | undefined,
  workflowId: string,
): string | undefined {
  if (!ui) return undefined;
  return `${ui.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace ?? 'default')}/workflows/${encodeURIComponent(workflowId)}`;
}
