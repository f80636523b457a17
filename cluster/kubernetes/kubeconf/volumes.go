package kubeconf

// volumes.go reads the volume keys of a role (Spark's
// KubernetesVolumeUtils): PREFIX + TYPE.NAME.mount.{path,readOnly,subPath}
// and PREFIX + TYPE.NAME.options.OPTION.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/sparkrpc/sparkrpc/actor"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Volume types of the volume keys.
const (
	VolumeHostPath = "hostPath"
	VolumeEmptyDir = "emptyDir"
	VolumePVC      = "persistentVolumeClaim"
)

// Volume is a volume of the pods and its mount in Spark's container.
type Volume struct {
	Volume corev1.Volume
	Mount  corev1.VolumeMount
}

// volumeKeys are the keys of one volume, by the part after TYPE.NAME.
type volumeKeys struct {
	typ, name string
	keys      map[string]string // "mount.path" -> full key
	values    map[string]string
}

// parseVolumes reads the volumes under prefix, sorted by name.
func parseVolumes(conf *actor.Conf, prefix string) ([]Volume, error) {
	byName := map[string]*volumeKeys{}
	for k, v := range conf.All() {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, ".", 3)
		if len(parts) != 3 || !slices.Contains([]string{VolumeHostPath, VolumeEmptyDir, VolumePVC}, parts[0]) {
			return nil, Invalid(k, v, "must be "+prefix+"{hostPath,emptyDir,persistentVolumeClaim}.NAME.{mount,options}.*")
		}
		if !IsDNSLabel(parts[1]) || len(parts[1]) > 63 {
			return nil, Invalid(k, v, "the volume's name must be a DNS label")
		}
		vk := byName[parts[1]]
		if vk == nil {
			vk = &volumeKeys{typ: parts[0], name: parts[1], keys: map[string]string{}, values: map[string]string{}}
			byName[parts[1]] = vk
		} else if vk.typ != parts[0] {
			return nil, Invalid(k, v, "volume "+parts[1]+" is also a "+vk.typ)
		}
		vk.keys[parts[2]], vk.values[parts[2]] = k, v
	}
	out := make([]Volume, 0, len(byName))
	for _, vk := range byName {
		v, err := vk.volume(prefix)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b Volume) int { return strings.Compare(a.Volume.Name, b.Volume.Name) })
	return out, nil
}

// volume checks the keys of one volume and returns it.
func (vk *volumeKeys) volume(prefix string) (Volume, error) {
	base := prefix + vk.typ + "." + vk.name + "."
	v := Volume{Volume: corev1.Volume{Name: vk.name}, Mount: corev1.VolumeMount{Name: vk.name}}
	for sub, val := range vk.values {
		key := vk.keys[sub]
		var err error
		switch sub {
		case "mount.path":
			if !strings.HasPrefix(val, "/") {
				err = Invalid(key, val, "must be an absolute path")
			}
			v.Mount.MountPath = val
		case "mount.subPath":
			v.Mount.SubPath = val
		case "mount.readOnly":
			if v.Mount.ReadOnly, err = strconv.ParseBool(val); err != nil {
				err = Invalid(key, val, "must be true or false")
			}
		default:
			opt, ok := strings.CutPrefix(sub, "options.")
			if !ok {
				return v, Invalid(key, val, "unknown volume key (mount.path, mount.readOnly, mount.subPath or options.*)")
			}
			err = vk.option(&v.Volume, opt, key, val)
		}
		if err != nil {
			return v, err
		}
	}
	if v.Mount.MountPath == "" {
		return v, Invalid(base+"mount.path", "", "must be set for volume "+vk.name)
	}
	return v, vk.complete(&v, base)
}

// option sets an option of the volume's source.
func (vk *volumeKeys) option(v *corev1.Volume, opt, key, val string) error {
	switch vk.typ + "." + opt {
	case "hostPath.path":
		v.HostPath = orNew(v.HostPath)
		v.HostPath.Path = val
	case "hostPath.type":
		v.HostPath = orNew(v.HostPath)
		t := corev1.HostPathType(val)
		v.HostPath.Type = &t
	case "emptyDir.medium":
		v.EmptyDir = orNew(v.EmptyDir)
		v.EmptyDir.Medium = corev1.StorageMedium(val)
	case "emptyDir.sizeLimit":
		q, err := resource.ParseQuantity(val)
		if err != nil {
			return Invalid(key, val, "must be a quantity such as 1Gi")
		}
		v.EmptyDir = orNew(v.EmptyDir)
		v.EmptyDir.SizeLimit = &q
	case "persistentVolumeClaim.claimName":
		v.PersistentVolumeClaim = orNew(v.PersistentVolumeClaim)
		v.PersistentVolumeClaim.ClaimName = val
	case "persistentVolumeClaim.storageClass", "persistentVolumeClaim.sizeLimit":
		return Invalid(key, val, "claims made on demand are not supported: name an existing claim with options.claimName")
	default:
		return Invalid(key, val, "unknown option of a "+vk.typ+" volume")
	}
	return nil
}

// complete checks the volume's required options and fills its source.
func (vk *volumeKeys) complete(v *Volume, base string) error {
	switch vk.typ {
	case VolumeHostPath:
		if v.Volume.HostPath == nil || v.Volume.HostPath.Path == "" {
			return Invalid(base+"options.path", "", "must be set for hostPath volume "+vk.name)
		}
	case VolumeEmptyDir:
		v.Volume.EmptyDir = orNew(v.Volume.EmptyDir)
	case VolumePVC:
		if v.Volume.PersistentVolumeClaim == nil || v.Volume.PersistentVolumeClaim.ClaimName == "" {
			return Invalid(base+"options.claimName", "", "must be set for persistentVolumeClaim volume "+vk.name)
		}
		v.Volume.PersistentVolumeClaim.ReadOnly = v.Mount.ReadOnly
	}
	return nil
}

func orNew[T any](p *T) *T {
	if p == nil {
		return new(T)
	}
	return p
}
