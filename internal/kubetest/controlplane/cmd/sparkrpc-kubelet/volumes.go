package main

// volumes.go gives a pod's process its volumes. A process shares the node's
// file system, so a volume cannot appear at its mount path: each supported
// volume (projected: service-account token, config map, secret, Downward
// API; configMap; secret; downwardAPI; emptyDir) is written to
// volumes/NAME in the pod's directory, which is the process's working
// directory, and each mount of the first container is a symbolic link at
// its mount path taken relative to that directory (the service-account
// volume, mounted at /var/run/secrets/kubernetes.io/serviceaccount, is at
// ./var/run/secrets/kubernetes.io/serviceaccount). Other volume types are
// not provided.
//
// So that a program finds a file of a mount by its absolute path, the node
// rewrites the container's command, arguments and environment values: a
// mount path at the start of a word (after the start, a space, '=', ':' or
// ',') and followed by '/' or the end of the word becomes the absolute path
// of its link (`--conf k=/var/run/secrets/x/key` runs as `--conf
// k=PODDIR/var/run/secrets/x/key`). Only paths are rewritten, never a
// volume's contents; the pod spec is not changed.
//
// The pod's directory and its volumes are mode 0700; secret files (and
// tokens and the kubeconfig) 0600. A Secret is read from the API server when
// the pod starts (not from the node's informer cache, which may not have
// seen a Secret created just before the pod). The volumes are removed as
// soon as the pod's process has ended (the logs stay until the pod is
// deleted), as the kubelet unmounts a terminated pod's volumes.
//
// For the service-account volume that the API server's ServiceAccount
// admission adds to every pod, the node requests a token bound to the pod
// (TokenRequest API, as the kubelet does), refreshes it at 80 % of its
// lifetime, and sets KUBECONFIG (unless the container sets it) to a
// kubeconfig naming the API server, the volume's ca.crt and token file and
// the pod's namespace: programs that follow the kubeconfig rules (client-go's
// default loading rules, kubectl, sparkrpc's driver) find the pod's
// credentials as a container finds the in-cluster files.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// serviceAccountMountPath is where containers find the in-cluster credentials.
const serviceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// requestTimeout bounds each API request of a volume.
const requestTimeout = 10 * time.Second

// projectedToken is a service-account token file of a pod's volume.
type projectedToken struct {
	path       string
	audience   string
	expiration int64 // seconds
}

// podVolumes is what the node made of a pod's volumes.
type podVolumes struct {
	tokens     []projectedToken
	expiry     time.Time // of the first token to expire
	kubeconfig string    // "" when the container does not mount the service-account volume
	mounts     []mount   // the first container's mounts that the node provided
}

// mount is a mount path and the absolute path of its link in the pod's directory.
type mount struct{ path, local string }

// mountVolumes writes pod's volumes under dir and links the first
// container's mounts; it returns the service-account tokens to refresh
// and the kubeconfig of the pod's credentials.
func (p *provider) mountVolumes(ctx context.Context, pod *corev1.Pod, dir string) (*podVolumes, error) {
	pv := &podVolumes{}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	made := map[string]string{} // volume name -> directory
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		vdir := filepath.Join(dir, "volumes", v.Name)
		ok, err := p.writeVolume(ctx, pod, v, vdir, pv)
		if err != nil {
			return nil, fmt.Errorf("volume %s: %w", v.Name, err)
		}
		if ok {
			made[v.Name] = vdir
		} else {
			p.cfg.logger.Warn("volume type not provided by this node", "pod", podKey(pod.Namespace, pod.Name), "volume", v.Name)
		}
	}
	c := &pod.Spec.Containers[0]
	for _, m := range c.VolumeMounts {
		vdir, ok := made[m.Name]
		if !ok {
			continue
		}
		link := filepath.Join(dir, filepath.Clean("/"+m.MountPath))
		if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
			return nil, err
		}
		target := vdir
		var err error
		if m.SubPath != "" {
			if target, err = inside(vdir, m.SubPath); err != nil {
				return nil, fmt.Errorf("mount %s: %w", m.MountPath, err)
			}
		}
		if err := os.Symlink(target, link); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("mount %s: %w", m.MountPath, err)
		}
		if filepath.IsAbs(m.MountPath) && filepath.Clean(m.MountPath) != "/" {
			pv.mounts = append(pv.mounts, mount{path: filepath.Clean(m.MountPath), local: link})
		}
		if filepath.Clean(m.MountPath) == serviceAccountMountPath {
			kc := filepath.Join(dir, "kubeconfig")
			if err := p.writeKubeconfig(kc, pod.Namespace, filepath.Join(vdir, "ca.crt"), filepath.Join(vdir, "token")); err != nil {
				return nil, err
			}
			pv.kubeconfig = kc
		}
	}
	return pv, nil
}

// writeVolume writes volume v into vdir; ok is false for a type this node
// does not provide.
func (p *provider) writeVolume(ctx context.Context, pod *corev1.Pod, v *corev1.Volume, vdir string, pv *podVolumes) (bool, error) {
	switch {
	case v.EmptyDir != nil:
		return true, os.MkdirAll(vdir, 0o700)
	case v.ConfigMap != nil:
		return true, p.writeConfigMap(pod.Namespace, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, vdir)
	case v.Secret != nil:
		return true, p.writeSecret(ctx, pod.Namespace, v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, vdir)
	case v.DownwardAPI != nil:
		return true, p.writeDownwardAPI(pod, v.DownwardAPI.Items, vdir)
	case v.Projected != nil:
		if err := os.MkdirAll(vdir, 0o700); err != nil {
			return true, err
		}
		for _, src := range v.Projected.Sources {
			var err error
			switch {
			case src.ServiceAccountToken != nil:
				t := projectedToken{audience: src.ServiceAccountToken.Audience, expiration: 3600}
				if e := src.ServiceAccountToken.ExpirationSeconds; e != nil {
					t.expiration = *e
				}
				if t.path, err = inside(vdir, src.ServiceAccountToken.Path); err != nil {
					return true, err
				}
				var exp time.Time
				if exp, err = p.requestToken(ctx, pod, t); err == nil {
					pv.tokens = append(pv.tokens, t)
					if pv.expiry.IsZero() || exp.Before(pv.expiry) {
						pv.expiry = exp
					}
				}
			case src.ConfigMap != nil:
				err = p.writeConfigMap(pod.Namespace, src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, vdir)
			case src.Secret != nil:
				err = p.writeSecret(ctx, pod.Namespace, src.Secret.Name, src.Secret.Items, src.Secret.Optional, vdir)
			case src.DownwardAPI != nil:
				err = p.writeDownwardAPI(pod, src.DownwardAPI.Items, vdir)
			}
			if err != nil {
				return true, err
			}
		}
		return true, nil
	}
	return false, nil
}

// requestToken asks the API server for a token of the pod's service
// account, bound to the pod, writes it to t.path and returns its expiry.
func (p *provider) requestToken(ctx context.Context, pod *corev1.Pod, t projectedToken) (time.Time, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: &t.expiration,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	if t.audience != "" {
		req.Spec.Audiences = []string{t.audience}
	}
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	tr, err := p.cfg.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(rctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return time.Time{}, fmt.Errorf("token of service account %s/%s: %w", pod.Namespace, sa, err)
	}
	return tr.Status.ExpirationTimestamp.Time, writeFile(t.path, []byte(tr.Status.Token), 0o600)
}

func (p *provider) writeConfigMap(ns, name string, items []corev1.KeyToPath, optional *bool, vdir string) error {
	cm, err := p.listers.ConfigMaps.ConfigMaps(ns).Get(name)
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return os.MkdirAll(vdir, 0o700)
	}
	if err != nil {
		return fmt.Errorf("config map %s: %w", name, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return writeItems(vdir, data, items, 0o644, optional != nil && *optional)
}

// writeSecret writes Secret ns/name, read from the API server, into vdir
// (files 0600).
func (p *provider) writeSecret(ctx context.Context, ns, name string, items []corev1.KeyToPath, optional *bool, vdir string) error {
	rctx, cancel := context.WithTimeout(ctx, requestTimeout)
	s, err := p.cfg.client.CoreV1().Secrets(ns).Get(rctx, name, metav1.GetOptions{})
	cancel()
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return os.MkdirAll(vdir, 0o700)
	}
	if err != nil {
		return fmt.Errorf("secret %s: %w", name, err)
	}
	return writeItems(vdir, s.Data, items, 0o600, optional != nil && *optional)
}

// writeItems writes data's keys (or the items chosen, to their paths) into vdir.
func writeItems(vdir string, data map[string][]byte, items []corev1.KeyToPath, mode os.FileMode, optional bool) error {
	if len(items) == 0 {
		for k, v := range data {
			f, err := inside(vdir, k)
			if err != nil {
				return err
			}
			if err := writeFile(f, v, mode); err != nil {
				return err
			}
		}
		return os.MkdirAll(vdir, 0o700)
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return fmt.Errorf("no key %s", it.Key)
		}
		f, err := inside(vdir, it.Path)
		if err != nil {
			return err
		}
		if err := writeFile(f, v, mode); err != nil {
			return err
		}
	}
	return nil
}

func (p *provider) writeDownwardAPI(pod *corev1.Pod, items []corev1.DownwardAPIVolumeFile, vdir string) error {
	if err := os.MkdirAll(vdir, 0o700); err != nil {
		return err
	}
	for _, it := range items {
		if it.FieldRef == nil {
			return fmt.Errorf("downward API file %s: only fieldRef is provided", it.Path)
		}
		v, err := p.fieldRef(pod, it.FieldRef.FieldPath)
		if err != nil {
			return fmt.Errorf("downward API file %s: %w", it.Path, err)
		}
		f, err := inside(vdir, it.Path)
		if err != nil {
			return err
		}
		if err := writeFile(f, []byte(v), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeKubeconfig writes a kubeconfig of the API server with a token file.
func (p *provider) writeKubeconfig(file, namespace, caFile, tokenFile string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["in-cluster"] = &clientcmdapi.Cluster{Server: p.cfg.apiServer, CertificateAuthority: caFile}
	cfg.AuthInfos["service-account"] = &clientcmdapi.AuthInfo{TokenFile: tokenFile}
	cfg.Contexts["in-cluster"] = &clientcmdapi.Context{Cluster: "in-cluster", AuthInfo: "service-account", Namespace: namespace}
	cfg.CurrentContext = "in-cluster"
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return writeFile(file, b, 0o600)
}

// inside returns rel under dir; rel must stay inside it.
func inside(dir, rel string) (string, error) {
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("path %q leaves the volume", rel)
	}
	return filepath.Join(dir, rel), nil
}

// writeFile replaces file atomically (a reader never sees half a token).
func writeFile(file string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}

// refreshTokens requests pp's tokens again at 80 % of their lifetime, as
// the kubelet does, until the pod's process has ended.
func (p *provider) refreshTokens(pp *podProc, tokens []projectedToken, expiry time.Time) {
	if len(tokens) == 0 {
		return
	}
	wait := time.Duration(float64(time.Until(expiry)) * 0.8)
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-pp.exited:
		return
	default:
	}
	pp.refresh = time.AfterFunc(max(wait, time.Second), func() {
		p.mu.Lock()
		pod := pp.pod.DeepCopy()
		p.mu.Unlock()
		next := time.Now().Add(time.Minute) // retry soon after a failure
		for _, t := range tokens {
			exp, err := p.requestToken(context.Background(), pod, t)
			if err != nil {
				p.cfg.logger.Warn("refreshing a service-account token", "pod", podKey(pod.Namespace, pod.Name), "err", err)
				break
			}
			next = exp
		}
		p.refreshTokens(pp, tokens, next)
	})
}

// localize rewrites the mount paths in s to their links (see the file's comment).
func (pv *podVolumes) localize(s string) string {
	if pv == nil || len(pv.mounts) == 0 {
		return s
	}
	var b strings.Builder
	i := 0
	for i < len(s) {
		if i == 0 || strings.IndexByte(" =:,", s[i-1]) >= 0 {
			if m, ok := pv.mountAt(s[i:]); ok {
				b.WriteString(m.local)
				i += len(m.path)
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// mountAt is the longest mount whose path starts s, followed by '/' or the
// end of a word.
func (pv *podVolumes) mountAt(s string) (mount, bool) {
	var best mount
	found := false
	for _, m := range pv.mounts {
		if !strings.HasPrefix(s, m.path) || found && len(m.path) <= len(best.path) {
			continue
		}
		if rest := s[len(m.path):]; rest == "" || strings.IndexByte("/ :,", rest[0]) >= 0 {
			best, found = m, true
		}
	}
	return best, found
}

// unmount removes the pod's volumes (its process has ended).
func unmount(dir string) {
	_ = os.RemoveAll(filepath.Join(dir, "volumes"))
	_ = os.Remove(filepath.Join(dir, "kubeconfig"))
}
