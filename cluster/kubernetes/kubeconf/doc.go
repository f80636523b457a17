// Package kubeconf is the configuration of sparkrpc applications on
// Kubernetes, shared by the cluster manager (package kubernetes), its API
// client (package kubeclient) and its executor pods' allocator (package
// executorpods): the configuration keys, with Spark's names and defaults;
// the names the pods carry (labels, containers, the driver's port, the
// mounted secret); and Config, the keys' values parsed and checked once,
// by Parse, with the shape of each role's pods (PodShape: the keys that
// package podspec turns into pods).
//
// Configuration errors match ErrInvalidConfig, and errors.As finds the
// *actor.ConfError that names the key and its value.
//
// # Files
//
//   - keys.go: the configuration keys, and RoleKeys, those of one role's
//     pods;
//   - config.go: Config and Parse, with the readers of labels, memory
//     overheads and quantities that the driver pod shares;
//   - podshape.go: PodShape and ParseShape, the shape the keys give one
//     role's pods (pod template, volumes, secrets, environment, image pull
//     secrets, node selector, scheduler), and ReadPodTemplate;
//   - volumes.go: the volume keys of a role;
//   - invalid.go: ErrInvalidConfig and the errors that match it;
//   - names.go: the pods' labels and containers, application ids and
//     resource names;
//   - authmount.go: the Kubernetes Secret of the application's shared
//     secret, and how pods mount it;
//   - args.go: a configuration as a pod command's --conf arguments.
package kubeconf
