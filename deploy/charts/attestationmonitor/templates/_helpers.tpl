{{- define "attestationmonitor.labels" -}}
app.kubernetes.io/name: attestation-monitor
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: asterism
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "attestationmonitor.selectorLabels" -}}
k8s-app: attestation-monitor
{{- end -}}

{{- define "attestationmonitor.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}
