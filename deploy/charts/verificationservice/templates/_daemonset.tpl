{{/*
One DaemonSet of the service: the main one (every node, or every node but tpmOverride's) and
tpmOverride's (its nodes, with its TPM). Arguments: root, name, tpm (kind, hostPath),
extraLabels (selector and pod), nodeSelector, exclude (a node selector the pods must not match).
*/}}
{{- define "verificationservice.daemonset" -}}
{{- $root := .root -}}
{{- $tpm := .tpm -}}
{{- $name := .name -}}
{{- $extraLabels := .extraLabels -}}
{{- $nodeSelector := .nodeSelector -}}
{{- $exclude := .exclude -}}
{{- $usesTpm := eq (include "verificationservice.usesTpm" $root) "true" -}}
{{- $configfsTsm := eq (include "verificationservice.usesConfigfsTsm" $root) "true" -}}
{{- $privileged := or (and $usesTpm (eq $tpm.kind "device")) $configfsTsm -}}
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: {{ $name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "verificationservice.labels" $root | nindent 4 }}
    component: verification-service
    k8s-app: verification-service
spec:
  selector:
    matchLabels:
      {{- include "verificationservice.selectorLabels" $root | nindent 6 }}
      {{- with $extraLabels }}
      {{- toYaml . | nindent 6 }}
      {{- end }}
  updateStrategy:
    {{- toYaml $root.Values.updateStrategy | nindent 4 }}
  template:
    metadata:
      labels:
        {{- include "verificationservice.selectorLabels" $root | nindent 8 }}
        {{- with $extraLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        component: verification-service
        app.kubernetes.io/name: verification-service
        app.kubernetes.io/instance: {{ $root.Release.Name }}
        {{- with $root.Values.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- with $root.Values.podAnnotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ $root.Values.serviceAccount.name }}
      automountServiceAccountToken: false
      {{- with $root.Values.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      tolerations:
        {{- toYaml $root.Values.tolerations | nindent 8 }}
      {{- if $exclude }}
      # The nodes of tpmOverride run the other DaemonSet.
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              {{- range $k, $v := $exclude }}
              - matchExpressions:
                  - key: {{ $k | quote }}
                    operator: NotIn
                    values: [{{ $v | quote }}]
              {{- end }}
      {{- else }}
      {{- with $root.Values.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- end }}
      # Root: the TPM device and the swtpm socket belong to root on the node.
      securityContext:
        runAsUser: 0
        runAsGroup: 0
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: verification-service
          image: {{ include "verificationservice.image" $root | quote }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args:
            - --attestation-variant={{ $root.Values.attestationVariant }}
            {{- if $usesTpm }}
            - --tpm={{ include "verificationservice.tpmFlagOf" $tpm }}
            {{- end }}
            - --grpc-port={{ $root.Values.grpcPort }}
            - --http-port={{ $root.Values.httpPort }}
            - -v={{ $root.Values.logVerbosity }}
            {{- range $root.Values.extraArgs }}
            - {{ . | quote }}
            {{- end }}
          ports:
            - name: grpc
              containerPort: {{ $root.Values.grpcPort }}
              protocol: TCP
            - name: http
              containerPort: {{ $root.Values.httpPort }}
              protocol: TCP
          livenessProbe:
            tcpSocket:
              port: grpc
            {{- toYaml $root.Values.probes.liveness | nindent 12 }}
          readinessProbe:
            tcpSocket:
              port: grpc
            {{- toYaml $root.Values.probes.readiness | nindent 12 }}
          resources:
            {{- toYaml $root.Values.resources | nindent 12 }}
          securityContext:
            {{- if $privileged }}
            # A host device (or configfs-tsm) is reachable from a pod only when privileged.
            privileged: true
            readOnlyRootFilesystem: true
            {{- else }}
            privileged: false
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            capabilities:
              drop: ["ALL"]
            {{- end }}
          volumeMounts:
            {{- if $usesTpm }}
            - name: tpm
              mountPath: {{ $tpm.hostPath }}
            {{- end }}
            {{- if and $usesTpm $root.Values.firmwareEventLog }}
            - name: event-log
              mountPath: /sys/kernel/security
              readOnly: true
            {{- end }}
            {{- if $configfsTsm }}
            - name: configfs
              mountPath: /sys/kernel/config
            {{- end }}
      volumes:
        {{- if $usesTpm }}
        - name: tpm
          hostPath:
            path: {{ $tpm.hostPath }}
            type: {{ if eq $tpm.kind "socket" }}Socket{{ else }}CharDevice{{ end }}
        {{- end }}
        {{- if and $usesTpm $root.Values.firmwareEventLog }}
        - name: event-log
          hostPath:
            path: /sys/kernel/security
            type: Directory
        {{- end }}
        {{- if $configfsTsm }}
        - name: configfs
          hostPath:
            path: /sys/kernel/config
            type: Directory
        {{- end }}
{{- end -}}
