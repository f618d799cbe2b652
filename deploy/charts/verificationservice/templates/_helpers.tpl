{{- define "verificationservice.labels" -}}
app.kubernetes.io/name: verification-service
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: asterism
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "verificationservice.selectorLabels" -}}
k8s-app: verification-service
{{- end -}}

{{- define "verificationservice.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* "true" when the variant attests through a TPM (every variant but qemu-tdx). */}}
{{- define "verificationservice.usesTpm" -}}
{{- ne .Values.attestationVariant "qemu-tdx" -}}
{{- end -}}

{{/* "true" when the variant quotes through configfs-tsm (/sys/kernel/config/tsm/report). */}}
{{- define "verificationservice.usesConfigfsTsm" -}}
{{- has .Values.attestationVariant (list "aws-sev-snp" "gcp-sev-snp" "qemu-tdx") -}}
{{- end -}}

{{/* --tpm of the program for a tpm value (kind, hostPath): the device path, or unix:<path> for a socket. */}}
{{- define "verificationservice.tpmFlagOf" -}}
{{- if eq .kind "socket" -}}unix:{{ end -}}{{ .hostPath }}
{{- end -}}

{{/* Two servers cannot share a port, neither in the pod nor on the node. */}}
{{- define "verificationservice.checkPorts" -}}
{{- if eq (int .Values.grpcPort) (int .Values.httpPort) -}}
{{- fail (printf "verificationservice: grpcPort and httpPort are both %v" .Values.grpcPort) -}}
{{- end -}}
{{- if eq (int .Values.nodePorts.grpc) (int .Values.nodePorts.http) -}}
{{- fail (printf "verificationservice: nodePorts.grpc and nodePorts.http are both %v" .Values.nodePorts.grpc) -}}
{{- end -}}
{{- end -}}
