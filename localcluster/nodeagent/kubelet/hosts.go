package kubelet

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
)

// ClusterDomain is the local cluster's DNS domain.
const ClusterDomain = "cluster.local"

// hostsFile is the cluster's name table: every pod's FQDN under its
// headless service, as cluster DNS would answer. It is bind-mounted at
// /etc/hosts in every pod, and host processes read it (see Resolver). It is
// rewritten in place, so the bind mounts see each change.
type hostsFile struct {
	path string

	mu       sync.Mutex
	entries  map[string]string // pod UID -> line
	services []string          // lines of services with a cluster IP
}

func newHostsFile(path string) (*hostsFile, error) {
	h := &hostsFile{path: path, entries: map[string]string{}}
	return h, h.write()
}

// PodNames returns the names a pod answers to: its FQDN under its
// subdomain (a StatefulSet's headless service), and its hostname.
func PodNames(pod *corev1.Pod) []string {
	host := pod.Name
	if pod.Spec.Hostname != "" {
		host = pod.Spec.Hostname
	}
	if pod.Spec.Subdomain == "" {
		return []string{host}
	}
	base := host + "." + pod.Spec.Subdomain + "." + pod.Namespace
	// The headless service's own name answers with its pods' addresses.
	svc := pod.Spec.Subdomain + "." + pod.Namespace + ".svc." + ClusterDomain
	return []string{base + ".svc." + ClusterDomain, base + ".svc", base, host, svc}
}

func (h *hostsFile) add(pod *corev1.Pod, ip string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries[string(pod.UID)] = ip + "\t" + strings.Join(PodNames(pod), " ")
	return h.writeLocked()
}

func (h *hostsFile) remove(pod *corev1.Pod) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.entries, string(pod.UID))
	return h.writeLocked()
}

// setServices replaces the entries of services that have a cluster IP.
func (h *hostsFile) setServices(svcs []corev1.Service) error {
	var lines []string
	for _, s := range svcs {
		ip := s.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			continue
		}
		base := s.Name + "." + s.Namespace
		lines = append(lines, ip+"\t"+base+".svc."+ClusterDomain+" "+base+".svc "+base)
	}
	sort.Strings(lines)
	h.mu.Lock()
	defer h.mu.Unlock()
	if strings.Join(lines, "\n") == strings.Join(h.services, "\n") {
		return nil
	}
	h.services = lines
	return h.writeLocked()
}

func (h *hostsFile) write() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writeLocked()
}

func (h *hostsFile) writeLocked() error {
	lines := make([]string, 0, len(h.entries))
	for _, l := range h.entries {
		lines = append(lines, l)
	}
	sort.Strings(lines)
	lines = append(lines, h.services...)
	body := "# kafkachaos local cluster: pod and service names (written by the node agent)\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n" +
		strings.Join(lines, "\n") + "\n"
	// In place (same inode): the pods' bind mounts follow.
	f, err := os.OpenFile(h.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("agent: hosts: %w", err)
	}
	if _, err := f.WriteString(body); err != nil {
		f.Close()
		return fmt.Errorf("agent: hosts: %w", err)
	}
	return f.Close()
}
