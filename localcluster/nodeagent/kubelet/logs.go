package kubelet

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
)

// followPoll is how often a followed log is read again once it is drained.
const followPoll = 100 * time.Millisecond

// GetContainerLogs implements nodeutil.Provider (kubectl logs): the
// container's log file, its last opts.Tail lines or opts.LimitBytes bytes.
// With opts.Follow it streams the whole file and then what the running
// container writes, until that process ends or the caller goes away, as
// `kubectl logs -f` does (Tail and LimitBytes are not applied then).
func (p *provider) GetContainerLogs(ctx context.Context, ns, name, container string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	p.mu.Lock()
	run, ok := p.pods[key(ns, name)]
	p.mu.Unlock()
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s not found", ns, name)
	}
	if opts.Follow {
		f, err := os.Open(run.logPath(container))
		if err != nil {
			return nil, errdefs.NotFoundf("logs of %s/%s/%s: %v", ns, name, container, err)
		}
		return &followReader{ctx: ctx, f: f, ended: run.processEnded(container), poll: followPoll}, nil
	}
	raw, err := os.ReadFile(run.logPath(container))
	if err != nil {
		return nil, errdefs.NotFoundf("logs of %s/%s/%s: %v", ns, name, container, err)
	}
	if opts.Tail > 0 {
		raw = tailLines(raw, opts.Tail)
	}
	if opts.LimitBytes > 0 && len(raw) > opts.LimitBytes {
		raw = raw[len(raw)-opts.LimitBytes:]
	}
	return io.NopCloser(bytes.NewReader(raw)), nil
}

// processEnded is closed once the named container's running process
// ends; it is closed already when none runs.
func (p *podRun) processEnded(container string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range append(append([]*ctrRun(nil), p.inits...), p.ctrs...) {
		if c.spec.Name == container && c.state.Running != nil && c.done != nil {
			return c.done
		}
	}
	ended := make(chan struct{})
	close(ended)
	return ended
}

// followReader reads a log file that a process is still writing: at its
// end it waits for more, until ended is closed (and the rest is read) or
// ctx ends.
type followReader struct {
	ctx   context.Context
	f     *os.File
	ended <-chan struct{}
	poll  time.Duration
	last  bool // ended was seen: what is left is read, then EOF
}

func (r *followReader) Read(b []byte) (int, error) {
	for {
		n, err := r.f.Read(b)
		if n > 0 || (err != nil && err != io.EOF) || r.last {
			return n, err
		}
		select {
		case <-r.ended:
			r.last = true // one more read: what the process wrote before it ended
		case <-r.ctx.Done():
			return 0, io.EOF
		case <-time.After(r.poll):
		}
	}
}

func (r *followReader) Close() error { return r.f.Close() }

func tailLines(raw []byte, n int) []byte {
	var lines [][]byte
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return append(bytes.Join(lines, []byte("\n")), '\n')
}
