// Package webhook is a small, real validating admission webhook for fault
// scenarios in which "a ValidatingWebhookConfiguration rejects the workload".
//
// It deliberately avoids any registry: the webhook Pod runs the lab binary
// itself (BuildImage packs it into an otherwise empty image that is loaded
// straight onto the kind nodes), serving the policy chosen by ParsePolicy
// with certificates from NewServingCerts, wired up by the objects from
// Objects.
package webhook
