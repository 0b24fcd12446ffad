#!/bin/sh
# Moves a control plane over from upstream's lifecycle-manager, whose CRDs also had
# operator.kyma-project.io/v1beta1 (so their status.storedVersions lists it), to deploy/crds,
# which serve v1beta2 only. The API server refuses a CRD that drops a version its
# status.storedVersions still lists, and objects written before v1beta2 became the storage version
# may still be in etcd as v1beta1. So, per kind, as kube-storage-version-migrator does: read every
# object and write it back unchanged (the API server stores it at the storage version, v1beta2),
# then set status.storedVersions to [v1beta2] through the CRD's status subresource.
# Run it with upstream's lifecycle-manager stopped, before applying deploy/crds
# (docs/operator/moving-from-upstream.md). A write that meets a conflict or a deleted
# object fails the run: run it again (objects already written are written again, harmlessly).
# KUBECTL is the kubectl to run (default: kubectl); KUBECONFIG and the context as kubectl reads them.
set -eu
KUBECTL=${KUBECTL:-kubectl}
for plural in kymas manifests moduletemplates modulereleasemetas; do
  crd=$plural.operator.kyma-project.io
  storage=$($KUBECTL get crd "$crd" -o jsonpath='{.spec.versions[?(@.storage==true)].name}')
  if [ "$storage" != v1beta2 ]; then
    echo "$crd: its storage version is $storage, not v1beta2: upgrade upstream's CRDs to a release that stores v1beta2 first" >&2
    exit 1
  fi
  count=$($KUBECTL get "$crd" --all-namespaces -o name | wc -l)
  if [ "$count" -gt 0 ]; then
    $KUBECTL get "$crd" --all-namespaces -o json | $KUBECTL replace -f - >/dev/null
  fi
  $KUBECTL patch crd "$crd" --subresource=status --type=merge -p '{"status":{"storedVersions":["v1beta2"]}}' >/dev/null
  echo "$crd: $count objects written at v1beta2, stored versions [v1beta2]"
done
