// Package replicas runs the gateway's container image the way a Kubernetes
// Deployment would, without a container engine or a cluster: the image's
// layers applied in order into a root folder (what a runtime does before
// it starts a container), then replicas started from that root with the
// image's entrypoint, arguments and environment, the pod's mounts as host
// folders (a ConfigMap, a Secret, HERMES_HOME's volume, /tmp), behind a
// round-robin balancer on loopback that stands for the Service.
//
// It is test support for the replica tests and `make loadtest`; nothing
// shipped imports it.
package replicas
