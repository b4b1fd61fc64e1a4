// Package charttest holds the tests of the gateway's Helm chart
// (deploy/helm/hermes-gateway): every example values file renders, its
// manifests pass kubeconform -strict against the Kubernetes schemas, and its
// config.yaml loads with hermes's own config loader; a planted typo in a
// Kubernetes field is refused by kubeconform and an unknown values key by
// values.schema.json.
//
// The tests run the helm and kubeconform binaries `make chart-check` builds
// into .tools/ (named by HERMES_CHART_HELM, HERMES_CHART_KUBECONFORM,
// HERMES_CHART_SCHEMAS and HERMES_CHART_KUBE_VERSION); without them they
// are skipped, naming the target. The package has no code of its own.
package charttest
