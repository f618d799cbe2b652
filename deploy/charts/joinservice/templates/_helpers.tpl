{{/* Common labels of every object of the chart. */}}
{{- define "joinservice.labels" -}}
app.kubernetes.io/name: join-service
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: asterism
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels (the reference's; the keyservice NetworkPolicy admits k8s-app=join-service). */}}
{{- define "joinservice.selectorLabels" -}}
k8s-app: join-service
{{- end -}}

{{/* image reference: repository@digest or repository:tag (tag defaults to appVersion). */}}
{{- define "joinservice.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The app reads its ConfigMaps from kube-system and mounts ConfigMaps of its own namespace. */}}
{{- define "joinservice.checkNamespace" -}}
{{- if ne .Release.Namespace "kube-system" -}}
{{- fail (printf "the joinservice must be installed into kube-system (it mounts kube-system's kubeadm-config and join-config ConfigMaps), not %q" .Release.Namespace) -}}
{{- end -}}
{{- end -}}
