package brokers

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"regexp"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// versionLogLimit bounds how much of a broker's log RunningVersion reads:
// Kafka logs its version once it has read its config, in its first few
// hundred lines.
const versionLogLimit = 8 << 20

// versionLine is the line Kafka's AppInfoParser logs as a broker starts.
var versionLine = regexp.MustCompile(`Kafka version: (\S+)`)

// RunningVersion returns the Kafka version that the broker in pod runs, as
// its current container logged it when it started ("Kafka version:
// 4.4.0"). Brokers answer no version of their own over the wire, and an
// image tag says what was asked for, not what runs. container "" is the
// pod's only or first container.
func RunningVersion(ctx context.Context, cs kubernetes.Interface, ns, pod, container string) (string, error) {
	limit := int64(versionLogLimit)
	rc, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Container: container, LimitBytes: &limit}).Stream(ctx)
	if err != nil {
		return "", fmt.Errorf("brokers: the log of pod %s/%s: %w", ns, pod, err)
	}
	defer rc.Close()
	v, err := versionInLog(rc)
	if err != nil {
		return "", fmt.Errorf("brokers: pod %s/%s: %w", ns, pod, err)
	}
	return v, nil
}

// versionInLog returns the version of the first "Kafka version: X" line.
func versionInLog(r io.Reader) (string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if m := versionLine.FindSubmatch(sc.Bytes()); m != nil {
			return string(m[1]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("reading its log: %w", err)
	}
	return "", fmt.Errorf("its log names no Kafka version (no %q line in its first %d MiB)", "Kafka version:", versionLogLimit>>20)
}
