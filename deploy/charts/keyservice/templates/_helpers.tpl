{{- define "keyservice.labels" -}}
app.kubernetes.io/name: key-service
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: asterism
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "keyservice.selectorLabels" -}}
k8s-app: key-service
{{- end -}}

{{- define "keyservice.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* Decoded lengths: master secret >= 16 bytes, salt >= 32 bytes (docs/protocol/key-hierarchy.md). */}}
{{- define "keyservice.checkSecret" -}}
{{- if .Values.createSecret -}}
{{- if lt (len (b64dec .Values.masterSecret)) 16 -}}
{{- fail "keyservice: masterSecret must be the base64 of at least 16 bytes" -}}
{{- end -}}
{{- if lt (len (b64dec .Values.salt)) 32 -}}
{{- fail "keyservice: salt must be the base64 of at least 32 bytes" -}}
{{- end -}}
{{- end -}}
{{- end -}}
