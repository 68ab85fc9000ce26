package javaload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kafkachaos/kafkachaos/steadystate/javaclients"
)

// How long a tool's pod may take to start (a JVM on a loaded node, an
// image pull on a real one), and how often it is looked at meanwhile.
const (
	StartTimeout = 5 * time.Minute
	startPoll    = time.Second
	// EndTimeout is how long after a tool's log ended its pod may still
	// say that it runs: a stopped pod's grace period, and more.
	EndTimeout = time.Minute
)

// CreateConfig creates the producer's settings (Spec.ConfigMap).
func CreateConfig(ctx context.Context, cs kubernetes.Interface, s Spec) error {
	if _, err := cs.CoreV1().ConfigMaps(s.Namespace).Create(ctx, s.ConfigMap(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("javaload: create ConfigMap %s: %w", s.ConfigMap().Name, err)
	}
	return nil
}

// CreatePod creates one of a run's pods (Spec.ProducerPod, ConsumerPod).
func CreatePod(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) error {
	if _, err := cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("javaload: create pod %s: %w", pod.Name, err)
	}
	return nil
}

// Follow calls fn with each event that the tool of pod prints, from its
// start, once its container has started, until the container ends or ctx
// does; raw, if not nil, gets every byte the tool printed, as it printed
// it. A stream that ends while the container still runs is an error:
// what the tool printed after that was not seen.
func Follow(ctx context.Context, cs kubernetes.Interface, ns, pod string, raw io.Writer, fn func(javaclients.Event)) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, startPoll, StartTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = describe(p)
		return p.Status.Phase != corev1.PodPending && p.Status.Phase != "", nil
	})
	if err != nil {
		return fmt.Errorf("javaload: pod %s did not start within %s (last seen: %s): %w", pod, StartTimeout, last, err)
	}
	stream, err := cs.CoreV1().Pods(ns).GetLogs(pod, &corev1.PodLogOptions{Follow: true}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("javaload: the log of pod %s: %w", pod, err)
	}
	defer stream.Close()
	var in io.Reader = stream
	if raw != nil {
		in = io.TeeReader(stream, raw)
	}
	if err := javaclients.Read(in, fn); err != nil {
		return fmt.Errorf("javaload: pod %s: %w", pod, err)
	}
	if ctx.Err() != nil {
		return nil
	}
	return endedWithTool(ctx, cs, ns, pod, time.Now())
}

// endedWithTool checks a log stream that ended at streamEnd against the
// pod's status: the stream ends when the tool's process does, and the
// status may say so a moment later. A tool that still runs after
// EndTimeout, or that the status says ended well after the stream did,
// printed what was not read. A pod already gone says nothing either way.
func endedWithTool(ctx context.Context, cs kubernetes.Interface, ns, pod string, streamEnd time.Time) error {
	var finished time.Time
	err := wait.PollUntilContextTimeout(ctx, startPoll, EndTimeout, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		if err != nil || running(p) {
			return false, nil
		}
		finished = finishedAt(p)
		return true, nil
	})
	switch {
	case err != nil && ctx.Err() == nil:
		return fmt.Errorf("javaload: the log of pod %s ended, and its tool still ran %s later: %w", pod, EndTimeout, err)
	case finished.After(streamEnd.Add(endSlack)):
		return fmt.Errorf("javaload: the log of pod %s ended at %s, its tool at %s: what it printed between was not read",
			pod, streamEnd.UTC().Format(time.TimeOnly), finished.UTC().Format(time.TimeOnly))
	}
	return nil
}

// endSlack is how much later than its log's end a tool may have ended by
// its pod's status, whose times are in whole seconds.
const endSlack = 3 * time.Second

// finishedAt is when p's container ended, by its status; zero if it does
// not say.
func finishedAt(p *corev1.Pod) time.Time {
	for _, c := range p.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil {
			return t.FinishedAt.Time
		}
	}
	return time.Time{}
}

// running reports whether p's container still runs.
func running(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running != nil {
			return true
		}
	}
	return false
}

// describe is what a pod's status says, for a start that never came.
func describe(p *corev1.Pod) string {
	s := string(p.Status.Phase)
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			s += fmt.Sprintf(", %s waiting: %s %s", c.Name, w.Reason, w.Message)
		}
	}
	return s
}

// Stop deletes a pod with its grace period: the tool closes its client
// (the producer flushes, a consumer commits and leaves its group) and
// prints its last events. A pod already gone is stopped.
func Stop(ctx context.Context, cs kubernetes.Interface, ns, pod string) error {
	return deletePod(ctx, cs, ns, pod, "stop", metav1.DeleteOptions{})
}

// Kill deletes a pod with no grace period: its tool is killed (SIGKILL)
// and closes nothing. A pod already gone is killed.
func Kill(ctx context.Context, cs kubernetes.Interface, ns, pod string) error {
	return deletePod(ctx, cs, ns, pod, "kill", metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
}

func deletePod(ctx context.Context, cs kubernetes.Interface, ns, pod, what string, opts metav1.DeleteOptions) error {
	if err := cs.CoreV1().Pods(ns).Delete(ctx, pod, opts); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("javaload: %s pod %s: %w", what, pod, err)
	}
	return nil
}

// Delete deletes every pod and ConfigMap of run name in ns, each pod with
// its grace period; what is gone already is not an error.
func Delete(ctx context.Context, cs kubernetes.Interface, ns, name string) error {
	sel := metav1.ListOptions{LabelSelector: LabelRun + "=" + name}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		return fmt.Errorf("javaload: list the pods of %s: %w", name, err)
	}
	var errs []error
	for _, p := range pods.Items {
		errs = append(errs, Stop(ctx, cs, ns, p.Name))
	}
	cms, err := cs.CoreV1().ConfigMaps(ns).List(ctx, sel)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("javaload: list the ConfigMaps of %s: %w", name, err))...)
	}
	for _, c := range cms.Items {
		if err := cs.CoreV1().ConfigMaps(ns).Delete(ctx, c.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("javaload: delete ConfigMap %s: %w", c.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Left lists the pods of run name in ns that are not gone yet.
func Left(ctx context.Context, cs kubernetes.Interface, ns, name string) ([]string, error) {
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: LabelRun + "=" + name})
	if err != nil {
		return nil, fmt.Errorf("javaload: list the pods of %s: %w", name, err)
	}
	var left []string
	for _, p := range pods.Items {
		left = append(left, p.Name)
	}
	return left, nil
}
