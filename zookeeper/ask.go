package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

// maxAnswer caps how much of an answer Ask reads. mntr, the longest word
// this package uses, answers a few KiB.
const maxAnswer = 1 << 20

// notWhitelisted ends the answer of a server asked a word that is not in its
// 4lw.commands.whitelist: NIOServerCnxn.checkFourLetterWord (and its Netty
// twin) answers "<word> is not executed because it is not in the whitelist."
const notWhitelisted = " is not executed because it is not in the whitelist."

// notServing is the whole answer of srvr, stat and mntr from a server that
// runs but serves no requests: it has no quorum or is electing a leader
// (AbstractFourLetterCommand.ZK_NOT_SERVING).
const notServing = "This ZooKeeper instance is not currently serving requests"

// ErrNotWhitelisted is wrapped by the error of Ask when the server refused
// the word because it is not in its 4lw.commands.whitelist.
var ErrNotWhitelisted = errors.New("not in the server's 4lw.commands.whitelist")

// ErrNotServing is wrapped by the errors of ParseSrvr and ParseMntr when the
// server answered that it is not currently serving requests: it is up but
// has no quorum, or is electing a leader.
var ErrNotServing = errors.New("not currently serving requests (no quorum, or electing a leader)")

// Ask sends the four-letter word to the ZooKeeper server at addr
// ("host:port", the client port) and returns its whole answer, read until
// the server closes the connection. It honours ctx's deadline and
// cancellation for the dial, the write and the read; an error ctx caused
// wraps ctx's error. A word the server refused because it is not
// whitelisted gives an error wrapping ErrNotWhitelisted, along with the
// server's answer.
//
// Ask does not interpret the answer further: an empty answer (ruok from a
// server that is not running) and ZooKeeper's "not currently serving
// requests" come back as they are.
func Ask(ctx context.Context, addr, word string) (string, error) {
	var d net.Dialer
	return AskVia(ctx, d.DialContext, addr, word)
}

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// AskVia is Ask over connections that dial opens: a resolver of the
// cluster's names, for one.
func AskVia(ctx context.Context, dial DialFunc, addr, word string) (string, error) {
	if !isWord(word) {
		return "", fmt.Errorf("zookeeper %s: %q is not a four-letter word", addr, word)
	}
	fail := func(step string, err error) error {
		if cerr := ctxErr(ctx, err); cerr != nil {
			return fmt.Errorf("zookeeper %s %s: %s: %w: %w", word, addr, step, cerr, err)
		}
		return fmt.Errorf("zookeeper %s %s: %s: %w", word, addr, step, err)
	}

	conn, err := dial(ctx, "tcp", addr)
	if err != nil {
		return "", fail("dial", err)
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return "", fail("set deadline", err)
		}
	}
	// Cancellation without a deadline: a deadline in the past unblocks the
	// write or read under way.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if _, err := io.WriteString(conn, word); err != nil {
		return "", fail("write", err)
	}
	// Half-close as nc and ZooKeeper's own FourLetterWordMain do; the server
	// answers and closes either way.
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	body, err := io.ReadAll(io.LimitReader(conn, maxAnswer+1))
	if err != nil {
		return string(body), fail("read", err)
	}
	if len(body) > maxAnswer {
		return "", fail("read", fmt.Errorf("answer longer than %d bytes", maxAnswer))
	}
	answer := string(body)
	if strings.HasSuffix(strings.TrimSpace(answer), notWhitelisted) {
		return answer, fmt.Errorf("zookeeper %s %s: %q is %w (server said %q)",
			word, addr, word, ErrNotWhitelisted, strings.TrimSpace(answer))
	}
	return answer, nil
}

// isWord reports whether w is four lowercase ASCII letters, the form of
// every four-letter word ZooKeeper knows. Anything else would be read by
// the server as the length of a client request.
func isWord(w string) bool {
	if len(w) != 4 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// ctxErr is the context error behind err, if any: ctx's own error once it
// is done, or context.DeadlineExceeded when err is the connection deadline,
// set from ctx's deadline, firing a moment before ctx notices.
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(err, cerr) {
			return nil // already wrapped
		}
		return cerr
	}
	if _, ok := ctx.Deadline(); ok && errors.Is(err, os.ErrDeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return nil
}
