package kubeconf

// args.go turns a configuration into the --conf arguments of a pod's
// command.

import "sort"

// Args is conf as sorted "--conf K=V" arguments.
func Args(conf map[string]string) []string {
	keys := make([]string, 0, len(conf))
	for k := range conf {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	args := make([]string, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, "--conf", k+"="+conf[k])
	}
	return args
}
