// kwok simulates kubelets: it keeps fake nodes Ready (with a node lease) and moves scheduled
// pods to Running/Ready, so that Deployments in the local cluster become Available without
// running any container. The stages below are the lifecycle it applies. A pod labelled
// `simulate: crash-loop` plays a container that keeps crashing instead (CrashLoopBackOff, never
// Ready), as the sample module faulty 3.0.0's manager does.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from './ports';
import { startProcess, waitUntil, type ManagedProcess } from './process';
import { supervise } from './supervise';

export const KWOK_NODE_NAME = 'kwok-node-0';

const STAGES = String.raw`
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: NotIn
      values: ['True']
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range NodeConditions }}
      - type: {{ .type | Quote }}
        status: {{ .status | Quote }}
        reason: {{ .reason | Quote }}
        message: {{ .message | Quote }}
        lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      addresses:
      - {type: InternalIP, address: {{ NodeIP | Quote }}}
      - {type: Hostname, address: {{ NodeName | Quote }}}
      allocatable: {cpu: "1000", memory: 1Ti, pods: "100000"}
      capacity: {cpu: "1000", memory: 1Ti, pods: "100000"}
      nodeInfo:
        architecture: amd64
        operatingSystem: linux
        kubeletVersion: {{ printf "kwok-%s" Version | Quote }}
        kubeProxyVersion: {{ printf "kwok-%s" Version | Quote }}
        containerRuntimeVersion: {{ printf "kwok-%s" Version | Quote }}
        kernelVersion: {{ printf "kwok-%s" Version | Quote }}
        bootID: ""
        machineID: ""
        osImage: ""
        systemUUID: ""
      phase: Running
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-heartbeat-with-lease
spec:
  resourceRef: {apiGroup: v1, kind: Node}
  selector:
    matchExpressions:
    - key: '.status.phase'
      operator: In
      values: [Running]
    - key: '.status.conditions.[] | select( .type == "Ready" ) | .status'
      operator: In
      values: ['True']
  delay:
    durationMilliseconds: 20000
    jitterDurationMilliseconds: 25000
  next:
    statusTemplate: |
      {{ $now := Now }}
      {{ $since := or .metadata.creationTimestamp $now }}
      conditions:
      {{ range NodeConditions }}
      - type: {{ .type | Quote }}
        status: {{ .status | Quote }}
        reason: {{ .reason | Quote }}
        message: {{ .message | Quote }}
        lastHeartbeatTime: {{ $now | Quote }}
        lastTransitionTime: {{ $since | Quote }}
      {{ end }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-ready
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.podIP'
      operator: DoesNotExist
    - key: '.metadata.labels.simulate'
      operator: DoesNotExist
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range list "Initialized" "Ready" "ContainersReady" "PodScheduled" }}
      - type: {{ . }}
        status: "True"
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: true
        started: true
        restartCount: 0
        state:
          running:
            startedAt: {{ $now | Quote }}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-crash-loop
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.podIP'
      operator: DoesNotExist
    - key: '.metadata.labels.simulate'
      operator: In
      values: [crash-loop]
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      {{ range list "Initialized" "PodScheduled" }}
      - type: {{ . }}
        status: "True"
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      {{ range list "Ready" "ContainersReady" }}
      - type: {{ . }}
        status: "False"
        reason: ContainersNotReady
        message: "containers with unready status: [manager]"
        lastTransitionTime: {{ $now | Quote }}
      {{ end }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: false
        started: false
        restartCount: 5
        state:
          waiting:
            reason: CrashLoopBackOff
            message: {{ printf "back-off 2m40s restarting failed container=%s" .name | Quote }}
        lastState:
          terminated: {exitCode: 1, reason: Error, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}
      {{ end }}
      hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
      podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) ( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
      phase: Running
      startTime: {{ $now | Quote }}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-complete
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: DoesNotExist
    - key: '.status.phase'
      operator: In
      values: [Running]
    - key: '.metadata.ownerReferences.[].kind'
      operator: In
      values: [Job]
  next:
    statusTemplate: |
      {{ $now := Now }}
      containerStatuses:
      {{ range .spec.containers }}
      - name: {{ .name | Quote }}
        image: {{ .image | Quote }}
        ready: false
        started: false
        restartCount: 0
        state:
          terminated: {exitCode: 0, reason: Completed, startedAt: {{ $now | Quote }}, finishedAt: {{ $now | Quote }}}
      {{ end }}
      phase: Succeeded
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete
spec:
  resourceRef: {apiGroup: v1, kind: Pod}
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: Exists
  next:
    finalizers: {empty: true}
    delete: true
`;

/** The fake node kwok keeps Ready; pods are scheduled onto it by kube-scheduler. */
export const KWOK_NODE = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: {
    name: KWOK_NODE_NAME,
    annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    labels: { 'kubernetes.io/hostname': KWOK_NODE_NAME, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64', type: 'kwok' },
  },
  spec: {},
};

export async function startKwok(binary: string, dir: string, kubeconfig: string): Promise<ManagedProcess> {
  const config = path.join(dir, 'kwok-stages.yaml');
  await writeFile(config, STAGES);
  const port = await freePort();
  const spawn = () => startProcess('kwok', binary, [
    `--kubeconfig=${kubeconfig}`,
    `--config=${config}`,
    '--manage-all-nodes=true',
    '--node-lease-duration-seconds=40',
    '--cidr=10.244.0.0/16',
    '--node-ip=10.1.0.1',
    `--server-address=127.0.0.1:${port}`,
  ], { logFile: path.join(dir, 'kwok.log'), env: { ...process.env, HOME: dir } });
  return await supervise(spawn, (p) => waitUntil(p, 'serving', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok));
}
